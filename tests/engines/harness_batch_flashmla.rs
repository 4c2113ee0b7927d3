// SPDX-License-Identifier: AGPL-3.0-only
//
// The second implementation's side of `make engines-check-batch-flashmla`:
// reads the variable-length records tests/engines/sweep_batch_flashmla.c
// writes (see there), recomputes each batch with the oracle
// (tests/engines/oracle_batch_flashmla.rs, copied beside this file as
// engine.rs), and counts the batches whose status, num_splits,
// num_splits_bound, workspace_bytes or any sequence's by_seq differ.
// Streams its input: a million batches are gigabytes. Exits 1 on any
// difference, on a record count other than N, or when the sweep was so
// narrow that it proves little (nothing answered or nothing refused, one
// split count only, no batch whose sequences split differently).
//
// Built with --test, the oracle's own worked examples run instead.
//
// usage: sweep_batch_flashmla N SEED SETTING | harness NAME N

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
    pub num_splits: u32,
    pub head_dim_v: u32,
    pub seqlen_q: u32,
    pub seq_lens: Vec<u32>,
}

#[derive(PartialEq, Debug, Clone)]
pub struct Answer {
    pub num_splits: u32,
    pub num_splits_bound: u32,
    pub workspace_bytes: u64,
    pub by_seq: Vec<u32>,
}

/// The oracle's worked examples' batch: DeepSeek-V3's decode on a Hopper
/// part of sm_count SMs, num_q_heads q heads over 1 KV head, head_dim
/// 576 / 512, pages of 64, one query token.
#[cfg(test)]
pub fn dsv3(sm_count: u32, num_q_heads: u32, lens: &[u32]) -> Batch {
    Batch {
        sm_count,
        num_q_heads,
        num_kv_heads: 1,
        head_dim: 576,
        page_size: 64,
        num_splits: 0,
        head_dim_v: 0,
        seqlen_q: 0,
        seq_lens: lens.to_vec(),
    }
}

fn main() {
    let name = std::env::args().nth(1).unwrap_or_else(|| "flashmla-batch".to_string());
    let expected: u64 = std::env::args().nth(2).and_then(|v| v.parse().ok()).unwrap_or(0);
    let stdin = std::io::stdin();
    let mut rec = Records { r: BufReader::with_capacity(1 << 20, stdin.lock()) };
    let (mut n, mut ok, mut refused, mut diffs, mut seqs) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let (mut mixed_splits, mut by_seq_diffs) = (0u64, 0u64);
    let mut distinct = std::collections::BTreeSet::new();
    while let Some(num_seqs) = rec.u32_or_end() {
        let v = rec.u32s(8);
        let seq_lens = rec.u32s(num_seqs as usize);
        let b = Batch {
            sm_count: v[0],
            num_q_heads: v[1],
            num_kv_heads: v[2],
            head_dim: v[3],
            page_size: v[4],
            num_splits: v[5],
            head_dim_v: v[6],
            seqlen_q: v[7],
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
                    "{}: differs at sm {} q {} kv {} d {} page {} splits-arg {} d_v {} s_q {} n {} \
                     lens {:?}...: C status {} {} {} {} by_seq {:?}..., oracle {:?}",
                    name, b.sm_count, b.num_q_heads, b.num_kv_heads, b.head_dim, b.page_size,
                    b.num_splits, b.head_dim_v, b.seqlen_q, num_seqs, lens, c_status, c.num_splits,
                    c.num_splits_bound, c.workspace_bytes, c.by_seq.iter().take(12).collect::<Vec<_>>(),
                    mine.as_ref().map(|a| (a.num_splits, a.num_splits_bound, a.workspace_bytes,
                        a.by_seq.iter().take(12).cloned().collect::<Vec<u32>>()))
                );
            }
        }
    }
    println!(
        "{}: {} batches ({} sequences), {} answered ({} distinct split counts, {} with sequences \
         split differently), {} refused: {} differences ({} in by_seq)",
        name, n, seqs, ok, distinct.len(), mixed_splits, refused, diffs, by_seq_diffs
    );
    if n != expected {
        eprintln!("{}: {} records, {} expected", name, n, expected);
        std::process::exit(1);
    }
    if diffs != 0 || ok == 0 || refused == 0 || distinct.len() < 2 || mixed_splits == 0 {
        std::process::exit(1);
    }
}
