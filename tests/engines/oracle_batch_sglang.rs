// SPDX-License-Identifier: AGPL-3.0-only
//
// The second implementation of SGLang's triton-backend decode split over a
// mixed batch, written from the upstream source (never from policy/sglang.c):
//
//   sgl-project/sglang
//   python/sglang/srt/layers/attention/triton_backend.py @ 00858422264b
//     TritonAttnBackend.__init__ (max_kv_splits, static_kv_splits,
//     enable_deterministic, split_tile_size), get_num_kv_splits,
//     init_forward_metadata (attn_logits / attn_lse), init_cuda_graph_state,
//     _apply_cuda_graph_metadata, get_cuda_graph_seq_len_fill_value
//   python/sglang/srt/layers/attention/triton_ops/metadata.py @ bdd1bcdf4715
//     get_num_kv_splits_triton
//   python/sglang/srt/layers/attention/triton_ops/decode_attention.py @ 03cd2ec4af85
//     _MIN_BLOCK_KV, _fwd_kernel_stage1 (kv_len_per_split, split_kv_start /
//     split_kv_end), _fwd_kernel_stage2, _decode_att_m_fwd (the grid)
//   python/sglang/srt/server_args.py @ 001067fffe33 (the defaults)
//
// Each function below follows the upstream function of the same name. Every
// quantity upstream holds in an int32 (Triton's int32 arguments and tensors,
// the graph runner's int32 seq_lens, the int32 kv_indptr and num_kv_splits)
// goes through `I32`, whose every operation refuses the batch where upstream
// would wrap; the eager seq_lens are torch int64 (`Wide`). The float32 steps
// are f32 here, as in the kernel. Refusals that are input bounds of
// splitkd's own (policy/sglang.h, "Deliberate differences") come first, in
// `bounds`.

use crate::{Answer, Batch};

type R<T> = Result<T, &'static str>;

const MIN_BLOCK_KV: i64 = 32; // decode_attention.py _MIN_BLOCK_KV

/// An integer of upstream's width: 32-bit ones refuse a wrap, 64-bit ones
/// never meet one here (every value is below 2^40).
#[derive(Clone, Copy)]
struct Int {
    v: i64,
    bits32: bool,
}

fn i32v(v: i64) -> R<Int> {
    Int { v, bits32: true }.fit()
}

impl Int {
    fn fit(self) -> R<Int> {
        if self.bits32 && (self.v > i32::MAX as i64 || self.v < i32::MIN as i64) {
            Err("an int32 of upstream's wraps")
        } else {
            Ok(self)
        }
    }
    fn both32(self, o: Int) -> bool {
        self.bits32 && o.bits32
    }
    fn add(self, o: Int) -> R<Int> {
        Int { v: self.v + o.v, bits32: self.both32(o) }.fit()
    }
    fn mul(self, o: Int) -> R<Int> {
        Int { v: self.v.checked_mul(o.v).ok_or("i64 overflow")?, bits32: self.both32(o) }.fit()
    }
    fn div(self, o: Int) -> R<Int> {
        // truncating, as Triton's and C's; every operand here is positive
        Int { v: self.v / o.v, bits32: self.both32(o) }.fit()
    }
    fn lit(&self, v: i64) -> Int {
        Int { v, bits32: true }
    }
}

// tl.cdiv(x, div) = (x + div - 1) // div, in the operands' width. A wrap
// of x + div alone is undone by the - 1 (two's complement), so only the
// whole sum must fit.
fn cdiv(x: Int, d: Int) -> R<Int> {
    let sum = Int { v: x.v + d.v - 1, bits32: x.both32(d) }.fit()?;
    sum.div(d)
}

fn minimum(a: Int, b: Int) -> Int {
    Int { v: a.v.min(b.v), bits32: a.bits32 && b.bits32 }
}

fn maximum(a: Int, b: Int) -> Int {
    Int { v: a.v.max(b.v), bits32: a.bits32 && b.bits32 }
}

/// tl.log2 on a float32, taken as the correctly rounded float log2 (see
/// policy/sglang.h on how it stands to the GPU's).
fn log2_f32(x: f32) -> f32 {
    (x as f64).log2() as f32
}

/// The backend as __init__ leaves it.
struct Backend {
    num_head: i64,
    num_kv_head: i64,
    v_head_dim: i64,
    device_core_count: i64,
    static_kv_splits: bool,
    max_kv_splits: i64,
    enable_deterministic: bool,
    split_tile_size: Option<i64>,
}

fn init(b: &Batch) -> R<Backend> {
    let max_context_len = b.max_model_len as i64; // model_config.context_len; 0 = not given
    let mut static_kv_splits = b.static_kv_splits; // SGLANG_TRITON_DECODE_ATTN_STATIC_KV_SPLITS
    let mut max_kv_splits = b.max_kv_splits as i64; // --triton-attention-num-kv-splits
    let enable_deterministic = b.deterministic;
    let split_tile_size = if enable_deterministic {
        // SGLANG_TRITON_DECODE_SPLIT_TILE_SIZE, 256 by default
        static_kv_splits = false;
        Some(if b.deterministic_tile == 0 { 256 } else { b.deterministic_tile as i64 })
    } else if b.split_tile_size == 0 {
        None // --triton-attention-split-tile-size
    } else {
        Some(b.split_tile_size as i64)
    };
    if let Some(t) = split_tile_size {
        if t > i32::MAX as i64 {
            return Err("tile above int32");
        }
        if max_context_len == 0 {
            return Err("a tile needs the context length");
        }
        max_kv_splits = (max_context_len + t - 1) / t; // Python ints
    }
    // num_kv_splits is an int32 tensor: it holds no more
    if max_kv_splits > i32::MAX as i64 {
        return Err("max_kv_splits above int32");
    }
    Ok(Backend {
        num_head: b.num_q_heads as i64,
        num_kv_head: b.num_kv_heads as i64,
        v_head_dim: b.head_dim as i64,
        device_core_count: b.sm_count as i64,
        static_kv_splits,
        max_kv_splits,
        enable_deterministic,
        split_tile_size,
    })
}

/// metadata.py get_num_kv_splits_triton, one program over all the rows.
#[allow(clippy::too_many_arguments)]
fn get_num_kv_splits_triton(
    seq_lens: &[Int],
    num_seq: i64,
    num_group: i64,
    num_head: i64,
    num_kv_head: i64,
    max_kv_splits: i64,
    device_core_count: i64,
) -> R<Vec<Int>> {
    let max_seq_len = seq_lens.iter().cloned().reduce(maximum).unwrap();
    let mut min_seq_len = seq_lens.iter().cloned().reduce(minimum).unwrap();
    if max_seq_len.mul(max_seq_len.lit(8))?.v < min_seq_len.mul(min_seq_len.lit(10))?.v {
        min_seq_len = max_seq_len;
    }
    let max_kv_splits = i32v(max_kv_splits)?;
    let max_kv_splits_1 = minimum(cdiv(max_seq_len, min_seq_len)?, max_kv_splits);
    let kv_chunk_size_1 = cdiv(max_seq_len, max_kv_splits_1)?;

    let ext_seq_len: f32 = (max_seq_len.v as f32) / 64.0;
    let ext_device_core_count =
        ((device_core_count as f32) * log2_f32(ext_seq_len).max(1.0f32)) as i32 as i64;
    let ext_device_core_count = i32v(ext_device_core_count)?;
    let (num_seq, num_group, num_head, num_kv_head) =
        (i32v(num_seq)?, i32v(num_group)?, i32v(num_head)?, i32v(num_kv_head)?);
    let mut block_h = i32v(16)?;
    let num_kv_group = num_head.div(num_kv_head)?;
    let token_grid = if num_kv_group.v == 1 {
        num_seq.mul(num_group)?.mul(num_head)?
    } else {
        block_h = minimum(block_h, num_kv_group);
        num_seq.mul(num_group)?.mul(cdiv(num_head, block_h)?)?
    };
    let max_kv_splits_2 = minimum(cdiv(ext_device_core_count, token_grid)?, max_kv_splits);
    let kv_chunk_size_2 = cdiv(max_seq_len, max_kv_splits_2)?;

    seq_lens
        .iter()
        .map(|&l| Ok(maximum(cdiv(l, kv_chunk_size_1)?, cdiv(l, kv_chunk_size_2)?)))
        .collect()
}

/// triton_backend.py get_num_kv_splits (num_kv_splits.shape[0] rows).
fn get_num_kv_splits(be: &Backend, seq_lens: &[Int]) -> R<Vec<Int>> {
    let (num_token, num_seq) = (seq_lens.len() as i64, seq_lens.len() as i64);
    let num_group = num_token / num_seq;
    if (be.static_kv_splits || be.device_core_count <= 0) && !be.enable_deterministic {
        return Ok(vec![i32v(be.max_kv_splits)?; seq_lens.len()]);
    }
    if let (Some(t), true) = (be.split_tile_size, be.enable_deterministic) {
        return seq_lens
            .iter()
            .map(|&l| {
                // seq_lens + tile - 1 in the tensor's dtype: two torch ops,
                // whose wraps cancel unless the whole sum leaves it
                let k = Int { v: l.v + t - 1, bits32: l.bits32 }.fit()?;
                // floor division (all positive), then stored into int32
                i32v(k.v.div_euclid(t))
            })
            .collect();
    }
    get_num_kv_splits_triton(
        seq_lens,
        num_seq,
        num_group,
        be.num_head,
        be.num_kv_head,
        be.max_kv_splits,
        be.device_core_count,
    )
}

/// _fwd_kernel_stage1 / _fwd_kernel_stage2 for one row: the split ids of
/// the grid (0..MAX_KV_SPLITS) whose split_kv_end > split_kv_start. With
/// split_kv_start = kv_len_per_split * id and split_kv_end = min(start +
/// kv_len_per_split, seq_len), kv_len_per_split >= 32, that holds exactly
/// while start < seq_len: for the ids below cdiv(seq_len, kv_len_per_split)
/// (counted so, not id by id: a million batches of long rows). The largest
/// int32 the grid forms is the last id's end, kv_len_per_split *
/// MAX_KV_SPLITS; it must not wrap.
fn splits_that_run(seq_len: Int, kv_splits: Int, max_kv_splits: i64) -> R<u32> {
    let seq_len = i32v(seq_len.v)?; // from the int32 kv_indptr
    let kv_splits = i32v(kv_splits.v)?; // from the int32 num_kv_splits
    let block = i32v(MIN_BLOCK_KV)?;
    let kv_len_per_split = cdiv(cdiv(seq_len, kv_splits)?, block)?.mul(block)?;
    kv_len_per_split.mul(i32v(max_kv_splits)?)?;
    // the count is ours, not an int32 of the kernel's: plain i64
    let per = kv_len_per_split.v;
    let nonempty = ((seq_len.v + per - 1) / per).min(max_kv_splits);
    Ok(nonempty as u32)
}

/// splitkd's own input bounds and the shape's counts (policy/sglang.h).
fn bounds(b: &Batch) -> R<()> {
    let n = b.seq_lens.len();
    if b.sm_count == 0 || n == 0 || b.num_q_heads == 0 || b.num_kv_heads == 0 || b.head_dim == 0
    {
        return Err("a count is 0");
    }
    if n > 4096 || b.seq_lens.iter().any(|&l| l == 0 || l > i32::MAX as u32) {
        return Err("the batch's bounds");
    }
    if b.num_splits != 0 || b.sm_count > 1 << 24 || b.num_q_heads > 1 << 20 {
        return Err("an input out of bounds");
    }
    if b.num_q_heads % b.num_kv_heads != 0 || b.max_kv_splits == 0 {
        return Err("heads or max_kv_splits");
    }
    if b.max_kv_splits > i32::MAX as u32 {
        return Err("max_kv_splits above int32");
    }
    if b.cuda_graph {
        let max_bs = if b.cuda_graph_max_bs == 0 { b.cuda_graph_bs } else { b.cuda_graph_max_bs };
        if (b.cuda_graph_bs as usize) < n || b.cuda_graph_bs > 4096 || max_bs < b.cuda_graph_bs {
            return Err("the graph's sizes");
        }
    } else if b.cuda_graph_bs != 0 || b.cuda_graph_max_bs != 0 {
        return Err("graph sizes without a graph");
    }
    if b.max_model_len != 0 && b.seq_lens.iter().any(|&l| l > b.max_model_len) {
        return Err("longer than the context");
    }
    Ok(())
}

pub fn launch(b: &Batch) -> Result<Answer, &'static str> {
    bounds(b)?;
    let be = init(b)?;
    let n = b.seq_lens.len();
    // init_forward_metadata (eager: forward_batch.seq_lens, int64) or the
    // graph's replay (_apply_cuda_graph_metadata over seq_lens[:bs], the
    // runner's int32 buffer, padding rows at get_cuda_graph_seq_len_fill_value)
    let (rows, bits32, alloc_rows) = if b.cuda_graph {
        let max_bs = if b.cuda_graph_max_bs == 0 { b.cuda_graph_bs } else { b.cuda_graph_max_bs };
        (b.cuda_graph_bs as usize, true, max_bs as u64)
    } else {
        (n, false, n as u64)
    };
    let seq_lens: Vec<Int> = (0..rows)
        .map(|i| Int { v: if i < n { b.seq_lens[i] as i64 } else { 1 }, bits32 })
        .collect();
    // kv_indptr[1:] = cumsum(seq_lens) into the int32 kv_indptr
    let mut acc = i32v(0)?;
    for l in &seq_lens {
        acc = acc.add(i32v(l.v)?)?;
    }
    let num_kv_splits = get_num_kv_splits(&be, &seq_lens)?;
    let mut by_seq = Vec::with_capacity(n);
    for (i, (&l, &k)) in seq_lens.iter().zip(&num_kv_splits).enumerate() {
        let ran = splits_that_run(l, k, be.max_kv_splits)?;
        if i < n {
            by_seq.push(ran);
        }
    }
    // attn_logits (bs, num_head, max_kv_splits, v_head_dim) + attn_lse
    // (bs, num_head, max_kv_splits), float32
    let cells = alloc_rows as u128 * be.num_head as u128 * be.max_kv_splits as u128;
    let bytes = cells * be.v_head_dim as u128 * 4 + cells * 4;
    if bytes > u64::MAX as u128 {
        return Err("scratch past 2^64");
    }
    Ok(Answer {
        num_splits: *by_seq.iter().max().unwrap(),
        num_splits_bound: be.max_kv_splits as u32,
        workspace_bytes: bytes as u64,
        by_seq,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::h100;

    const MIXED: [u32; 8] = [8192, 512, 512, 512, 100, 100, 100, 100];

    #[test]
    fn worked_numbers_default() {
        let a = launch(&h100(&MIXED)).unwrap();
        assert_eq!(a.by_seq, vec![8, 1, 1, 1, 1, 1, 1, 1]);
        assert_eq!(a.num_splits, 8);
        assert_eq!(a.num_splits_bound, 8);
        assert_eq!(a.workspace_bytes, 8 * 32 * 8 * 129 * 4);
    }

    #[test]
    fn worked_numbers_deterministic() {
        let mut b = h100(&MIXED);
        b.deterministic = true;
        b.max_model_len = 131072;
        let a = launch(&b).unwrap();
        let want: Vec<u32> = MIXED.iter().map(|l| (l + 255) / 256).collect();
        assert_eq!(a.by_seq, want);
        assert_eq!(a.by_seq[0], 32);
        assert_eq!(a.num_splits_bound, 512);
        assert_eq!(a.workspace_bytes, 8 * 32 * 512 * 129 * 4);
        b.max_model_len = 0;
        assert!(launch(&b).is_err());
    }

    #[test]
    fn graph_padding_rows_lower_the_minimum() {
        let lens = [1000u32; 64];
        let mut b = h100(&lens);
        assert!(launch(&b).unwrap().by_seq.iter().all(|&x| x == 2));
        b.cuda_graph = true;
        b.cuda_graph_bs = 72;
        b.cuda_graph_max_bs = 160;
        let a = launch(&b).unwrap();
        assert!(a.by_seq.iter().all(|&x| x == 8));
        assert_eq!(a.workspace_bytes, 160 * 32 * 8 * 129 * 4);
    }

    #[test]
    fn a_graph_refuses_its_int32_wraps_only() {
        let mut b = h100(&[250_000_000]);
        assert!(launch(&b).is_ok());
        b.cuda_graph = true;
        b.cuda_graph_bs = 1;
        assert!(launch(&b).is_err()); // min_seq_len * 10
        b.cuda_graph_bs = 2;
        assert_eq!(launch(&b).unwrap().by_seq, vec![8]);
        b.seq_lens = vec![268_435_456];
        assert!(launch(&b).is_err()); // max_seq_len * 8
    }

    #[test]
    fn rounding_to_32_tokens_empties_splits() {
        let mut b = h100(&[100, 1, 8192]);
        b.static_kv_splits = true;
        assert_eq!(launch(&b).unwrap().by_seq, vec![4, 1, 8]);
    }
}
