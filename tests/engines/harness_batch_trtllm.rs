// SPDX-License-Identifier: AGPL-3.0-only
//
// The second implementation's side of `make engines-check-batch-trtllm`:
// reads the variable-length records tests/engines/sweep_batch_trtllm.c
// writes (see there), recomputes each batch with the oracle
// (tests/engines/oracle_batch_trtllm.rs, copied beside this file as
// engine.rs), and counts the batches whose
// status, num_splits, num_splits_bound, workspace_bytes or any sequence's
// by_seq differ. Streams its input: a million batches are gigabytes.
// Exits 1 on any difference, on a record count other than N, or when the
// sweep was so narrow that it proves little (nothing answered or nothing
// refused, one split count only, no batch split in more than one block
// when multi-block is on, no scratch counted).
//
// Built with --test, the oracle's own worked examples run instead.
//
// usage: sweep_batch_trtllm N SEED multi|det | harness NAME N

mod engine;
mod records;

use records::Records;
use std::io::BufReader;

pub struct Batch {
    pub sm_count: u32,
    pub num_q_heads: u32,
    pub num_kv_heads: u32,
    pub head_dim: u32,
    pub page_size: u32,
    pub blocks_per_sm: u32,
    pub cuda_graph: bool,
    pub num_splits: u32,
    pub deterministic: bool,
    pub seq_lens: Vec<u32>,
}

#[derive(PartialEq, Debug, Clone)]
pub struct Answer {
    pub num_splits: u32,
    pub num_splits_bound: u32,
    pub workspace_bytes: u64,
    pub by_seq: Vec<u32>,
}

/// The oracle's worked examples' batch: an H100 (132 SMs), 32 q / 8 kv
/// heads, head_dim 128 (Llama-3.1-8B).
#[cfg(test)]
pub fn h100(page_size: u32, lens: &[u32], deterministic: bool) -> Batch {
    Batch {
        sm_count: 132,
        num_q_heads: 32,
        num_kv_heads: 8,
        head_dim: 128,
        page_size,
        blocks_per_sm: 0,
        cuda_graph: false,
        num_splits: 0,
        deterministic,
        seq_lens: lens.to_vec(),
    }
}

fn main() {
    let name = std::env::args().nth(1).unwrap_or_else(|| "trtllm-batch".to_string());
    let expected: u64 = std::env::args().nth(2).and_then(|v| v.parse().ok()).unwrap_or(0);
    let stdin = std::io::stdin();
    let mut rec = Records { r: BufReader::with_capacity(1 << 20, stdin.lock()) };
    let (mut n, mut ok, mut refused, mut diffs, mut seqs) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let (mut split, mut by_seq_diffs, mut with_scratch) = (0u64, 0u64, 0u64);
    let mut distinct = std::collections::BTreeSet::new();
    while let Some(num_seqs) = rec.u32_or_end() {
        let v = rec.u32s(9);
        let seq_lens = rec.u32s(num_seqs as usize);
        let b = Batch {
            sm_count: v[0],
            num_q_heads: v[1],
            num_kv_heads: v[2],
            head_dim: v[3],
            page_size: v[4],
            blocks_per_sm: v[5],
            cuda_graph: v[6] != 0,
            num_splits: v[7],
            deterministic: v[8] != 0,
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
                by_seq_diffs += a.by_seq.iter().zip(&c.by_seq).filter(|(x, y)| x != y).count() as u64;
                *a == c
            }
            (Err(_), 1) => true,
            _ => false,
        };
        match &mine {
            Ok(a) => {
                ok += 1;
                distinct.insert(a.num_splits);
                if a.num_splits > 1 {
                    split += 1;
                }
                if a.workspace_bytes > 0 {
                    with_scratch += 1;
                }
            }
            Err(_) => refused += 1,
        }
        if !same {
            diffs += 1;
            if diffs <= 10 {
                let lens: Vec<u32> = b.seq_lens.iter().take(12).cloned().collect();
                eprintln!(
                    "{}: differs at sm {} q {} kv {} d {} page {} bps {} graph {} splits-arg {} det {} \
                     n {} lens {:?}...: C status {} {} {} {} by_seq {:?}..., oracle {:?}",
                    name, b.sm_count, b.num_q_heads, b.num_kv_heads, b.head_dim, b.page_size,
                    b.blocks_per_sm, b.cuda_graph, b.num_splits, b.deterministic, num_seqs, lens, c_status, c.num_splits, c.num_splits_bound,
                    c.workspace_bytes, c.by_seq.iter().take(12).collect::<Vec<_>>(),
                    mine.as_ref().map(|a| (a.num_splits, a.workspace_bytes, a.by_seq.iter().take(12).cloned().collect::<Vec<u32>>()))
                );
            }
        }
    }
    println!(
        "{}: {} batches ({} sequences), {} answered ({} distinct split counts, {} split, {} with \
         scratch), {} refused: {} differences ({} in by_seq)",
        name, n, seqs, ok, distinct.len(), split, with_scratch, refused, diffs, by_seq_diffs
    );
    if n != expected {
        eprintln!("{}: {} records, {} expected", name, n, expected);
        std::process::exit(1);
    }
    // Deterministic batches all run one block; the multi-block ones must
    // have split and counted scratch.
    let det = name.ends_with("-det");
    let narrow = if det {
        distinct.len() != 1 || split != 0
    } else {
        distinct.len() < 2 || split == 0 || with_scratch == 0
    };
    if diffs != 0 || ok == 0 || refused == 0 || narrow {
        std::process::exit(1);
    }
}
