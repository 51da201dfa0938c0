//! The canary: the secret each generated message holds.

/// The canary of failure `index` of a case seeded `seed`. Every canary of a case has the same
/// length, so none is a part of another, and only characters JSON and `Debug` write as they
/// are, so a search of serialized text finds it.
pub fn canary(seed: u64, index: usize) -> String {
    format!("CNRY{seed:016x}x{index:04}")
}

/// The length of every canary.
pub const CANARY_LEN: usize = 4 + 16 + 1 + 4;
