// SPDX-License-Identifier: AGPL-3.0-only
//
// The second implementation's side of `make engines-check`: reads the
// records tests/engines/sweep.c writes for one engine port (64 bytes each,
// see sweep.c), recomputes each shape with this engine's oracle
// (tests/engines/oracle_<engine>.rs, copied beside this file as engine.rs),
// and counts the differences in status, num_splits, num_splits_bound and
// workspace_bytes. Exits 1 on any difference, or when the sweep was so
// narrow that it proves little (no shape answered or none refused).
//
// Built with --test, the oracles' own #[test]s of the worked
// examples run instead (make engines-check runs both).
//
// usage: sweep N SEED | harness ENGINE N (N: the records expected, so a sweep
// that died part way fails here too)

// pub: harness_batch.rs, which takes this file as its module `single`,
// calls the oracle's launch_batch through it.
pub mod engine;

use std::io::Read;

pub struct Shape {
    pub sm_count: u32,
    pub num_seqs: u32,
    pub num_q_heads: u32,
    pub num_kv_heads: u32,
    pub head_dim: u32,
    pub seq_len: u32,
    pub page_size: u32,
    pub blocks_per_sm: u32,
    pub cuda_graph: bool,
    pub num_splits: u32,
}

#[derive(PartialEq, Debug, Clone, Copy)]
pub struct Answer {
    pub num_splits: u32,
    pub num_splits_bound: u32,
    pub workspace_bytes: u64,
}

/// A mixed batch's answer (harness_batch.rs): the launch's answer, each
/// sequence's split count in the batch's order, and whether the engine's
/// one float quotient lies within 2 ulp of a whole number (FA3's
/// blocks_per_sm; false for an engine with none).
#[derive(PartialEq, Debug, Clone)]
#[allow(dead_code)] // built by the oracles' launch_batch, read by harness_batch.rs
pub struct BatchAnswer {
    pub answer: Answer,
    pub by_seq: Vec<u32>,
    pub near_whole: bool,
}

/// The brief's rule before any engine's own: a count that must be at least
/// 1 and is 0 is refused (sm_count only where the engine reads it; vLLM
/// does not). Every oracle asks this first.
pub fn zero_count(s: &Shape, reads_sm_count: bool) -> Option<&'static str> {
    if reads_sm_count && s.sm_count == 0 {
        return Some("sm_count must be at least 1");
    }
    let counts = [
        (s.num_seqs, "num_seqs must be at least 1"),
        (s.num_q_heads, "num_q_heads must be at least 1"),
        (s.num_kv_heads, "num_kv_heads must be at least 1"),
        (s.head_dim, "head_dim must be at least 1"),
        (s.seq_len, "seq_len must be at least 1"),
        (s.page_size, "page_size must be at least 1"),
    ];
    counts.iter().find(|c| c.0 == 0).map(|c| c.1)
}

/// A shape for the oracles' own worked examples (`rustc --test`): the
/// FA2/FA3 inputs, FlashInfer's left at 0.
#[cfg(test)]
#[allow(clippy::too_many_arguments)]
pub fn test_shape(sm: u32, seqs: u32, q: u32, kv: u32, d: u32, len: u32, page: u32, splits: u32) -> Shape {
    Shape {
        sm_count: sm,
        num_seqs: seqs,
        num_q_heads: q,
        num_kv_heads: kv,
        head_dim: d,
        seq_len: len,
        page_size: page,
        blocks_per_sm: 0,
        cuda_graph: false,
        num_splits: splits,
    }
}

fn u32_at(r: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([r[i], r[i + 1], r[i + 2], r[i + 3]])
}

fn main() {
    let name = std::env::args().nth(1).unwrap_or_else(|| "engine".to_string());
    let expected: u64 = std::env::args().nth(2).and_then(|v| v.parse().ok()).unwrap_or(0);
    let mut all = Vec::new();
    std::io::stdin().read_to_end(&mut all).expect("read stdin");
    if all.len() % 64 != 0 {
        eprintln!("{}: {} bytes is not a whole number of records", name, all.len());
        std::process::exit(1);
    }
    let (mut n, mut ok, mut refused, mut diffs) = (0u64, 0u64, 0u64, 0u64);
    let mut distinct = std::collections::BTreeSet::new();
    for r in all.chunks(64) {
        let v: Vec<u32> = (0..10).map(|k| u32_at(r, 4 * k)).collect();
        let s = Shape {
            sm_count: v[0],
            num_seqs: v[1],
            num_q_heads: v[2],
            num_kv_heads: v[3],
            head_dim: v[4],
            seq_len: v[5],
            page_size: v[6],
            blocks_per_sm: v[7],
            cuda_graph: v[8] != 0,
            num_splits: v[9],
        };
        let c_status = u32_at(r, 40);
        let c = Answer {
            num_splits: u32_at(r, 44),
            num_splits_bound: u32_at(r, 48),
            workspace_bytes: u32_at(r, 56) as u64 | (u32_at(r, 60) as u64) << 32,
        };
        n += 1;
        let mine = engine::launch(&s);
        let same = match (&mine, c_status) {
            (Ok(a), 0) => *a == c,
            (Err(_), 1) => true,
            _ => false,
        };
        match mine {
            Ok(a) => {
                ok += 1;
                distinct.insert(a.num_splits);
            }
            Err(_) => refused += 1,
        }
        if !same {
            diffs += 1;
            if diffs <= 10 {
                eprintln!(
                    "{}: differs at sm {} seqs {} q {} kv {} d {} len {} page {} bps {} graph {} splits-arg {}: \
                     C status {} {:?}, oracle {:?}",
                    name, s.sm_count, s.num_seqs, s.num_q_heads, s.num_kv_heads, s.head_dim, s.seq_len,
                    s.page_size, s.blocks_per_sm, s.cuda_graph, s.num_splits, c_status, c, mine
                );
            }
        }
    }
    println!(
        "{}: {} shapes, {} answered ({} distinct split counts), {} refused: {} differences",
        name, n, ok, distinct.len(), refused, diffs
    );
    if n != expected {
        eprintln!("{}: {} records, {} expected", name, n, expected);
        std::process::exit(1);
    }
    if diffs != 0 || ok == 0 || refused == 0 || distinct.len() < 2 {
        std::process::exit(1);
    }
}
