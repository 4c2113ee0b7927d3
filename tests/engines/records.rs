// SPDX-License-Identifier: AGPL-3.0-only
//
// The mixed-batch harnesses' reader (harness_batch_<port>.rs): the
// little-endian u32s of the records a sweep writes (sweep_rng.h's put32),
// read as a stream. One copy, copied beside each harness as records.rs.
// A record cut short or a read error ends the run with exit 1.

use std::io::Read;

pub struct Records<R: Read> {
    pub r: R,
}

impl<R: Read> Records<R> {
    // One u32, or None at a clean end of input.
    pub fn u32_or_end(&mut self) -> Option<u32> {
        let mut b = [0u8; 4];
        let mut got = 0;
        while got < 4 {
            match self.r.read(&mut b[got..]) {
                Ok(0) => {
                    if got == 0 {
                        return None;
                    }
                    eprintln!("harness: input ends inside a record");
                    std::process::exit(1);
                }
                Ok(k) => got += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    eprintln!("harness: read: {}", e);
                    std::process::exit(1);
                }
            }
        }
        Some(u32::from_le_bytes(b))
    }
    pub fn u32(&mut self) -> u32 {
        self.u32_or_end().unwrap_or_else(|| {
            eprintln!("harness: input ends inside a record");
            std::process::exit(1);
        })
    }
    pub fn u32s(&mut self, n: usize) -> Vec<u32> {
        let mut buf = vec![0u8; 4 * n];
        if let Err(e) = self.r.read_exact(&mut buf) {
            eprintln!("harness: input ends inside a record ({})", e);
            std::process::exit(1);
        }
        buf.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }
}
