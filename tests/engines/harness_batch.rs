// SPDX-License-Identifier: AGPL-3.0-only
//
// The second implementation's side of `make engines-check-batch-<engine>`:
// reads the variable-length records tests/engines/sweep_batch.c writes for
// one engine port's mixed batch (64 + 8 * num_seqs bytes each, see
// sweep_batch.c), recomputes each batch with this engine's oracle
// (tests/engines/oracle_<engine>.rs, its launch_batch), and counts the
// differences in status (the same batches refused), each sequence's split
// count, num_splits, num_splits_bound, workspace_bytes and the
// near-whole flag. Exits 1 on any difference, or when the sweep proves
// little (no batch answered, none refused, fewer than two split counts, or
// no batch whose sequences were given different counts, where the engine
// can give them).
//
// It takes harness.rs, unchanged, as its module `single` for the shape,
// the answer and the zero-count rule every oracle reads through `crate::`,
// and reads the records as a stream: a million batches are gigabytes.
//
// usage: sweep_batch N SEED | harness_batch ENGINE N

#[allow(dead_code)] // single's own main and record reader are not used here
#[path = "harness.rs"]
mod single;

pub use single::{zero_count, Answer, BatchAnswer, Shape};

use single::engine;
use std::io::Read;

/// engine.h's bounds on a mixed batch, which every port refuses before its
/// engine's own rules: 1 to ENGINE_MAX_SEQS (4096) sequences, each of 1 to
/// ENGINE_MAX_SEQ_LEN (2^31 - 1) tokens.
fn batch_refusal(seq_lens: &[u32]) -> Option<&'static str> {
    if seq_lens.is_empty() {
        return Some("num_seqs must be at least 1");
    }
    if seq_lens.len() > 4096 {
        return Some("a mixed batch holds at most 4096 sequences");
    }
    if seq_lens.iter().any(|&l| l == 0) {
        return Some("every one of seq_lens must be at least 1");
    }
    if seq_lens.iter().any(|&l| l > i32::MAX as u32) {
        return Some("a sequence is longer than 2^31 - 1 tokens");
    }
    None
}

fn u32_at(r: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([r[i], r[i + 1], r[i + 2], r[i + 3]])
}

/// Reads exactly buf.len() bytes; false at a clean end of input before the
/// first byte, exits on a record cut short.
fn read_record(input: &mut impl Read, buf: &mut [u8], name: &str) -> bool {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return false,
            Ok(0) => {
                eprintln!("{}: a record cut short after {} bytes", name, got);
                std::process::exit(1);
            }
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                eprintln!("{}: read: {}", name, e);
                std::process::exit(1);
            }
        }
    }
    true
}

#[derive(Default)]
struct Counts {
    batches: u64,
    sequences: u64,
    answered: u64,
    refused: u64,
    mixed_splits: u64, // answered batches whose sequences got different counts
    near_whole: u64,
    differing_batches: u64,
    // differences
    status: u64,
    by_seq: u64,
    num_splits: u64,
    num_splits_bound: u64,
    workspace_bytes: u64,
    near_whole_flag: u64,
}

fn main() {
    let name = std::env::args().nth(1).unwrap_or_else(|| "engine".to_string());
    let expected: u64 = std::env::args().nth(2).and_then(|v| v.parse().ok()).unwrap_or(0);
    let stdin = std::io::stdin();
    let mut input = std::io::BufReader::with_capacity(1 << 20, stdin.lock());
    let mut head = [0u8; 64];
    let mut rest: Vec<u8> = Vec::new();
    let mut c = Counts::default();
    let mut distinct = std::collections::BTreeSet::new();
    while read_record(&mut input, &mut head, &name) {
        let v: Vec<u32> = (0..10).map(|k| u32_at(&head, 4 * k)).collect();
        let num_seqs = v[1] as usize;
        rest.resize(8 * num_seqs, 0);
        if num_seqs > 0 && !read_record(&mut input, &mut rest, &name) {
            eprintln!("{}: a record's sequences are missing", name);
            std::process::exit(1);
        }
        let seq_lens: Vec<u32> = (0..num_seqs).map(|i| u32_at(&rest, 4 * i)).collect();
        let c_by_seq: Vec<u32> = (0..num_seqs).map(|i| u32_at(&rest, 4 * (num_seqs + i))).collect();
        // seq_len is the batch's longest here (the oracle takes the lengths)
        let s = Shape {
            sm_count: v[0],
            num_seqs: v[1],
            num_q_heads: v[2],
            num_kv_heads: v[3],
            head_dim: v[4],
            seq_len: seq_lens.iter().copied().max().unwrap_or(0),
            page_size: v[6],
            blocks_per_sm: v[7],
            cuda_graph: v[8] != 0,
            num_splits: v[9],
        };
        let c_status = u32_at(&head, 40);
        let c_answer = Answer {
            num_splits: u32_at(&head, 44),
            num_splits_bound: u32_at(&head, 48),
            workspace_bytes: u32_at(&head, 56) as u64 | (u32_at(&head, 60) as u64) << 32,
        };
        let c_near_whole = u32_at(&head, 52) & 1 != 0;
        c.batches += 1;
        c.sequences += num_seqs as u64;

        let mine = match batch_refusal(&seq_lens) {
            Some(why) => Err(why),
            None => engine::launch_batch(&s, &seq_lens),
        };
        let mut differs = false;
        match (&mine, c_status) {
            (Ok(a), 0) => {
                let by_seq_differs = a.by_seq.iter().zip(&c_by_seq).filter(|(x, y)| x != y).count() as u64;
                c.by_seq += by_seq_differs;
                c.num_splits += (a.answer.num_splits != c_answer.num_splits) as u64;
                c.num_splits_bound += (a.answer.num_splits_bound != c_answer.num_splits_bound) as u64;
                c.workspace_bytes += (a.answer.workspace_bytes != c_answer.workspace_bytes) as u64;
                c.near_whole_flag += (a.near_whole != c_near_whole) as u64;
                differs = by_seq_differs != 0 || a.answer != c_answer || a.near_whole != c_near_whole;
            }
            (Err(_), 1) => {}
            _ => {
                c.status += 1;
                differs = true;
            }
        }
        match &mine {
            Ok(a) => {
                c.answered += 1;
                distinct.insert(a.answer.num_splits);
                c.near_whole += a.near_whole as u64;
                if a.by_seq.iter().any(|&x| x != a.by_seq[0]) {
                    c.mixed_splits += 1;
                }
            }
            Err(_) => c.refused += 1,
        }
        if differs {
            c.differing_batches += 1;
        }
        if differs && c.differing_batches <= 10 {
            let head = num_seqs.min(16);
            let more = if num_seqs > 16 { "..." } else { "" };
            let oracle = mine.as_ref().map(|a| (a.answer, a.near_whole, a.by_seq[..head].to_vec()));
            eprintln!(
                "{}: differs at sm {} seqs {} q {} kv {} d {} page {} splits-arg {} lens {:?}{}: \
                 C status {} {:?} near-whole {} by_seq {:?}{}, oracle {:?}",
                name,
                s.sm_count,
                num_seqs,
                s.num_q_heads,
                s.num_kv_heads,
                s.head_dim,
                s.page_size,
                s.num_splits,
                &seq_lens[..head],
                more,
                c_status,
                c_answer,
                c_near_whole,
                &c_by_seq[..head],
                more,
                oracle
            );
        }
    }
    let diffs = c.status + c.by_seq + c.num_splits + c.num_splits_bound + c.workspace_bytes + c.near_whole_flag;
    println!(
        "{}: {} batches of {} sequences, {} answered ({} distinct split counts, {} with sequences split \
         differently, {} near a whole blocks_per_sm), {} refused: {} differences (num_splits_by_seq {}, \
         num_splits {}, num_splits_bound {}, workspace_bytes {}, near-whole {}, refused {})",
        name, c.batches, c.sequences, c.answered, distinct.len(), c.mixed_splits, c.near_whole, c.refused, diffs,
        c.by_seq, c.num_splits, c.num_splits_bound, c.workspace_bytes, c.near_whole_flag, c.status
    );
    if c.batches != expected {
        eprintln!("{}: {} records, {} expected", name, c.batches, expected);
        std::process::exit(1);
    }
    let splits_per_sequence = engine::SPLITS_PER_SEQUENCE;
    if diffs != 0
        || c.answered == 0
        || c.refused == 0
        || distinct.len() < 2
        || (splits_per_sequence && c.mixed_splits == 0)
    {
        std::process::exit(1);
    }
}
