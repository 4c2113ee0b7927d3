// SPDX-License-Identifier: AGPL-3.0-only
//
// Differential oracle: compiles the seed's attn_splitk.rs UNCHANGED and prints
// what it answers for a large set of inputs, one line each. check_vectors.c
// feeds the same inputs to the C port and compares. The Makefile copies the
// seed beside this file as attn_splitk.rs before running rustc.
//
// Line formats (numbers in decimal, bytes in lowercase hex, "-" for empty):
//   P <hex-bytes> <none|legacy|auto|pinned N>        parse
//   R <hex-declared> <hex-override|unset> <label> <0|1>  resolve_policy
//   A <sm> <heads> <splits>                          auto_splits
//   L <sm> <heads> <ref> <splits>                    legacy_splits
//   N <policy> <sm> <heads> <ref> <splits>           num_splits
//   W <policy> <sm> <heads> <rows> <ref> <slots>     workspace_slots
//   K <name> <value>                                 a constant of the seed
//   T auto <sm> <heads> <unclamped>                  auto_splits before its clamp
//   T legacy <sm> <heads> <ref> <ctas>               legacy_splits's current_ctas
// The T lines are the seed's own expressions from the bodies of
// auto_splits and legacy_splits, stopped before the clamp or the division:
// the numbers an explanation of a count may quote.
// where <policy> is legacy, auto or a pinned count (any u32, unclamped).
#![allow(dead_code)]

pub struct TargetDefaults {
    pub attn_decode_splitk: &'static str,
}
pub const TARGET_DEFAULTS: TargetDefaults = TargetDefaults { attn_decode_splitk: "legacy" };

#[path = "attn_splitk.rs"]
mod attn_splitk;

use attn_splitk::*;
use std::io::{BufWriter, Write};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*: deterministic, so a failure reproduces.
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn hex(b: &[u8]) -> String {
    if b.is_empty() {
        return "-".to_string();
    }
    b.iter().map(|x| format!("{:02x}", x)).collect()
}

fn policy_text(p: Option<SplitkPolicy>) -> String {
    match p {
        None => "none".to_string(),
        Some(SplitkPolicy::Legacy) => "legacy".to_string(),
        Some(SplitkPolicy::Auto) => "auto".to_string(),
        Some(SplitkPolicy::Pinned(n)) => format!("pinned {}", n),
    }
}

fn parse_bytes(b: &[u8]) -> Option<SplitkPolicy> {
    std::str::from_utf8(b).ok().and_then(parse)
}

fn spellings(rng: &mut Rng) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = Vec::new();
    let words = [
        "legacy", "LEGACY", "Legacy", "lEgAcY", "auto", "AUTO", "Auto", "aUtO", "0", "off", "OFF",
        "Off", "false", "FALSE", "False", "no", "NO", "No", "nO", "", "a", "aut", "autos",
        "autoauto", "legac", "legacyy", "of", "offf", "n", "fals", "true", "yes", "on", "none",
        "1", "2", "4", "8", "15", "16", "17", "32", "100", "00", "000", "007", "0016", "+0",
        "+1", "+16", "+17", "++1", "+-1", "-+1", "+", "-", "-0", "-1", "-16", "4294967295",
        "+4294967295", "04294967295", "00000000000000000000004294967295", "4294967296",
        "4294967297", "9999999999", "99999999999999999999999999", "18446744073709551616",
        "1_0", "1e1", "0x10", "0b1", "0o7", "1.0", "1.", ".5", "1,0", "5 5", "5\t5", "au to",
        "\u{0}", "auto\u{0}", "\u{0}auto", "4\u{0}", "\u{663}", "\u{ff15}", "\u{ff41}uto",
        "\u{212a}", "legac\u{1e8f}", "\u{130}", "\u{131}", "AUTO\u{301}", "off\u{ad}",
    ];
    for w in words.iter() {
        v.push(w.as_bytes().to_vec());
    }
    // Every White_Space character and some that are NOT White_Space, on
    // either side and both sides of a few words.
    let spaces: [u32; 33] = [
        0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003,
        0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F,
        0x3000, 0x180E, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x1C, 0x1F,
    ];
    let cores = ["auto", "LEGACY", "4", "+3", "off", "", "4294967296"];
    for &cp in spaces.iter() {
        let s = char::from_u32(cp).unwrap().to_string();
        for core in cores.iter() {
            v.push(format!("{}{}", s, core).into_bytes());
            v.push(format!("{}{}", core, s).into_bytes());
            v.push(format!("{}{}{}{}", s, s, core, s).into_bytes());
            v.push(format!("{}{}{}", core, s, core).into_bytes());
        }
    }
    // Bytes that are not UTF-8, alone and around a valid spelling.
    let bad: [&[u8]; 16] = [
        b"\xff", b"\xfe", b"\x80", b"\xbf", b"\xc0\xa0", b"\xc1\xbf", b"\xc2", b"\xe0\x80\xa0",
        b"\xe2\x80", b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xf0\x80\x80\xa0", b"\xf4\x90\x80\x80",
        b"\xf5\x80\x80\x80", b"\xf8\x88\x80\x80\x80", b"\xe3\x80",
    ];
    for b in bad.iter() {
        v.push(b.to_vec());
        v.push([b.to_vec(), b"auto".to_vec()].concat());
        v.push([b"auto".to_vec(), b.to_vec()].concat());
        v.push([b"4".to_vec(), b.to_vec()].concat());
    }
    // Random strings over an alphabet of the pieces that matter.
    let pieces: [&[u8]; 32] = [
        b"0", b"1", b"6", b"9", b"+", b"-", b" ", b"\t", b"\n", b"a", b"u", b"t", b"o", b"A",
        b"O", b"l", b"e", b"g", b"c", b"y", b"f", b"n", b"s", b"\xc2\xa0", b"\xe3\x80\x80",
        b"\xe2\x80\x8b", b"\xe2\x80\xa8", b"\xc2\x85", b"\xff", b"\xe2\x80", b"\x00", b"4",
    ];
    for _ in 0..200_000 {
        let n = rng.below(9) as usize;
        let mut s = Vec::new();
        for _ in 0..n {
            s.extend_from_slice(pieces[rng.below(pieces.len() as u64) as usize]);
        }
        v.push(s);
    }
    // Random keywords with random case and random padding.
    let kw = ["legacy", "auto", "off", "false", "no", "0", "16", "4294967295"];
    for _ in 0..20_000 {
        let w = kw[rng.below(kw.len() as u64) as usize];
        let mut s = Vec::new();
        for _ in 0..rng.below(3) {
            s.extend_from_slice(pieces[6 + rng.below(3) as usize]);
        }
        for c in w.bytes() {
            s.push(if rng.below(2) == 0 { c.to_ascii_uppercase() } else { c });
        }
        for _ in 0..rng.below(3) {
            s.extend_from_slice(b"\xe2\x80\x89");
        }
        v.push(s);
    }
    v
}

fn edge_u32s() -> Vec<u32> {
    let mut v: Vec<u32> = (0..=40).collect();
    v.extend_from_slice(&[
        47, 48, 49, 63, 64, 65, 107, 108, 113, 114, 127, 128, 129, 131, 132, 133, 141, 142, 147,
        148, 169, 170, 255, 256, 1023, 1024, 65535, 65536, 1 << 20, 0x7FFF_FFFF, 0x8000_0000,
        0x8000_0001, u32::MAX / 2, u32::MAX / 3, u32::MAX / 16, u32::MAX / 16 + 1, u32::MAX - 1,
        u32::MAX,
    ]);
    v
}

fn policy_word(p: SplitkPolicy) -> String {
    match p {
        SplitkPolicy::Legacy => "legacy".to_string(),
        SplitkPolicy::Auto => "auto".to_string(),
        SplitkPolicy::Pinned(n) => n.to_string(),
    }
}

fn main() {
    let out = std::io::stdout();
    let mut w = BufWriter::new(out.lock());
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);

    // The seed's constants as it compiles them, for the C header's macros.
    writeln!(w, "K SPLITK_TARGET_WAVES {}", SPLITK_TARGET_WAVES).unwrap();
    writeln!(w, "K MAX_DECODE_SPLITS {}", MAX_DECODE_SPLITS).unwrap();

    let sp = spellings(&mut rng);
    for s in sp.iter() {
        writeln!(w, "P {} {}", hex(s), policy_text(parse_bytes(s))).unwrap();
    }
    // resolve_policy over a product of declared and override spellings.
    let decl: Vec<&[u8]> = vec![b"auto", b"legacy", b"4", b"off", b"atuo", b"", b" AUTO ", b"99999999999", b"\xe3\x80\x8016"];
    for d in decl.iter() {
        let ds = std::str::from_utf8(d).unwrap();
        let (p, env) = resolve_policy(ds, None);
        writeln!(w, "R {} unset {} {}", hex(d), p.label(), env as u8).unwrap();
        for o in sp.iter().step_by(97) {
            // A Rust env value is a &str: invalid UTF-8 cannot reach it,
            // and the C caller sees it as an override that does not parse.
            let os = std::str::from_utf8(o).ok();
            let (p, env) = match os {
                Some(o) => resolve_policy(ds, Some(o)),
                None => resolve_policy(ds, Some("\u{1}not-utf8")),
            };
            writeln!(w, "R {} {} {} {}", hex(d), hex(o), p.label(), env as u8).unwrap();
        }
    }

    let edges = edge_u32s();
    for &sm in edges.iter() {
        for &h in edges.iter() {
            writeln!(w, "A {} {} {}", sm, h, auto_splits(sm, h)).unwrap();
            let target = SPLITK_TARGET_WAVES.saturating_mul(sm.max(1));
            writeln!(w, "T auto {} {} {}", sm, h, target.div_ceil(h.max(1))).unwrap();
        }
    }
    let small: Vec<u32> = (0..=48).chain([64, 96, 128, 132, 148, 170, u32::MAX / 7, u32::MAX]).collect();
    for &sm in small.iter() {
        for &h in small.iter() {
            for &r in small.iter().step_by(3) {
                writeln!(w, "L {} {} {} {}", sm, h, r, legacy_splits(sm, h, r)).unwrap();
                let current_ctas = h.max(1).saturating_mul(r.max(1));
                writeln!(w, "T legacy {} {} {} {}", sm, h, r, current_ctas).unwrap();
            }
        }
    }
    let policies = [
        SplitkPolicy::Legacy,
        SplitkPolicy::Auto,
        SplitkPolicy::Pinned(0),
        SplitkPolicy::Pinned(1),
        SplitkPolicy::Pinned(7),
        SplitkPolicy::Pinned(16),
        SplitkPolicy::Pinned(17),
        SplitkPolicy::Pinned(u32::MAX),
    ];
    for _ in 0..300_000 {
        let p = policies[rng.below(policies.len() as u64) as usize];
        let pick = |r: &mut Rng| -> u32 {
            if r.below(4) == 0 {
                edges[r.below(edges.len() as u64) as usize]
            } else {
                r.below(300) as u32
            }
        };
        let (sm, h, rows, rf) = (pick(&mut rng), pick(&mut rng), pick(&mut rng), pick(&mut rng));
        writeln!(w, "N {} {} {} {} {}", policy_word(p), sm, h, rf, num_splits(p, sm, h, rf)).unwrap();
        writeln!(
            w,
            "W {} {} {} {} {} {}",
            policy_word(p),
            sm,
            h,
            rows,
            rf,
            workspace_slots(p, sm, h, rows, rf)
        )
        .unwrap();
    }
}
