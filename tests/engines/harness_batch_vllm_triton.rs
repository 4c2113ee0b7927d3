// SPDX-License-Identifier: AGPL-3.0-only
//
// The second implementation's side of `make engines-check-batch-vllm_triton`:
// reads the variable-length records tests/engines/sweep_batch_vllm_triton.c
// writes (see there), recomputes each batch with the oracle
// (tests/engines/oracle_batch_vllm_triton.rs, copied beside this file as
// engine.rs), and counts the batches whose status, num_splits,
// num_splits_bound, workspace_bytes or any sequence's by_seq differ.
// Streams its input: a million batches are hundreds of megabytes.
// Exits 1 on any difference, on a record count other than N, or when the
// sweep was so narrow that it proves little (nothing answered or nothing
// refused, one split count only, and, where the setting allows the 3D
// kernel, no batch whose sequences run different segment counts).
//
// Built with --test, the oracle's own worked examples run instead.
//
// usage: sweep_batch_vllm_triton N SEED SETTING | harness NAME N [2d]

mod engine;
mod records;

use records::Records;
use std::io::BufReader;

pub struct Batch {
    pub num_q_heads: u32,
    pub num_kv_heads: u32,
    pub head_dim: u32,
    pub page_size: u32,
    pub num_splits: u32,
    pub cudagraph_mode: u32,
    pub max_capture_size: u32,
    pub batch_invariant: bool,
    pub seq_lens: Vec<u32>,
}

#[derive(PartialEq, Debug, Clone)]
pub struct Answer {
    pub num_splits: u32,
    pub num_splits_bound: u32,
    pub workspace_bytes: u64,
    pub by_seq: Vec<u32>,
}

/// The oracle's worked examples' batch: Llama-3.1-8B on an H100, 32 q / 8
/// kv heads, head_dim 128, pages of 16, vLLM's defaults.
#[cfg(test)]
pub fn h100(lens: &[u32]) -> Batch {
    Batch {
        num_q_heads: 32,
        num_kv_heads: 8,
        head_dim: 128,
        page_size: 16,
        num_splits: 0,
        cudagraph_mode: engine::CG_FULL_AND_PIECEWISE,
        max_capture_size: 0,
        batch_invariant: false,
        seq_lens: lens.to_vec(),
    }
}

fn main() {
    let name = std::env::args().nth(1).unwrap_or_else(|| "vllm_triton-batch".to_string());
    let expected: u64 = std::env::args().nth(2).and_then(|v| v.parse().ok()).unwrap_or(0);
    let only_2d = std::env::args().nth(3).as_deref() == Some("2d");
    let stdin = std::io::stdin();
    let mut rec = Records { r: BufReader::with_capacity(1 << 20, stdin.lock()) };
    let (mut n, mut ok, mut refused, mut diffs, mut seqs) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let (mut mixed_splits, mut by_seq_diffs, mut three_d) = (0u64, 0u64, 0u64);
    let mut distinct = std::collections::BTreeSet::new();
    while let Some(num_seqs) = rec.u32_or_end() {
        let v = rec.u32s(8);
        let seq_lens = rec.u32s(num_seqs as usize);
        let b = Batch {
            num_q_heads: v[0],
            num_kv_heads: v[1],
            head_dim: v[2],
            page_size: v[3],
            num_splits: v[4],
            cudagraph_mode: v[5],
            max_capture_size: v[6],
            batch_invariant: v[7] != 0,
            seq_lens,
        };
        let c_status = rec.u32();
        let c_splits = rec.u32();
        let c_bound = rec.u32();
        let ws_lo = rec.u32() as u64;
        let ws_hi = rec.u32() as u64;
        let c_by_seq = rec.u32s(num_seqs as usize);
        let c = Answer {
            num_splits: c_splits,
            num_splits_bound: c_bound,
            workspace_bytes: ws_lo | ws_hi << 32,
            by_seq: c_by_seq,
        };
        n += 1;
        seqs += num_seqs as u64;
        let mine = engine::launch(&b);
        let same = match (&mine, c_status) {
            (Ok(a), 0) => {
                by_seq_diffs +=
                    a.by_seq.iter().zip(&c.by_seq).filter(|(x, y)| x != y).count() as u64;
                *a == c
            }
            (Err(_), 1) => true,
            _ => false,
        };
        match &mine {
            Ok(a) => {
                ok += 1;
                distinct.insert(a.num_splits);
                if a.num_splits_bound > 1 {
                    three_d += 1;
                }
                if a.by_seq.iter().any(|&x| x != a.num_splits) {
                    mixed_splits += 1;
                }
            }
            Err(_) => refused += 1,
        }
        if !same {
            diffs += 1;
            if diffs <= 10 {
                let lens: Vec<u32> = b.seq_lens.iter().take(12).cloned().collect();
                eprintln!(
                    "{}: differs at q {} kv {} d {} page {} splits-arg {} mode {} \
                     max-capture {} invariant {} n {} lens {:?}...: C status {} {} {} {} \
                     by_seq {:?}..., oracle {:?}",
                    name, b.num_q_heads, b.num_kv_heads, b.head_dim, b.page_size, b.num_splits,
                    b.cudagraph_mode, b.max_capture_size, b.batch_invariant, num_seqs, lens,
                    c_status,
                    c.num_splits, c.num_splits_bound, c.workspace_bytes,
                    c.by_seq.iter().take(12).collect::<Vec<_>>(),
                    mine.as_ref().map(|a| (a.num_splits, a.num_splits_bound, a.workspace_bytes,
                                           a.by_seq.iter().take(12).cloned().collect::<Vec<u32>>()))
                );
            }
        }
    }
    println!(
        "{}: {} batches ({} sequences), {} answered ({} on the 3D kernel, {} distinct split \
         counts, {} with sequences split differently), {} refused: {} differences ({} in by_seq)",
        name, n, seqs, ok, three_d, distinct.len(), mixed_splits, refused, diffs, by_seq_diffs
    );
    if n != expected {
        eprintln!("{}: {} records, {} expected", name, n, expected);
        std::process::exit(1);
    }
    let narrow = if only_2d {
        three_d != 0 || distinct.len() != 1
    } else {
        three_d == 0 || distinct.len() < 2 || mixed_splits == 0
    };
    if diffs != 0 || ok == 0 || refused == 0 || narrow {
        std::process::exit(1);
    }
}
