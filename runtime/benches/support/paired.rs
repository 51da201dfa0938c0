//! Paired, interleaved timing: a baseline and a candidate measured in alternating batches in
//! one process, so that drift in the machine's speed (other work on a shared machine,
//! frequency changes) affects both alike; the ratio is taken per pair of batches and its
//! median reported.
#![allow(dead_code)]

use std::time::{Duration, Instant};

/// The result of [`compare`].
#[derive(Debug, Clone, Copy)]
pub struct Paired {
    /// Median time per call of the baseline.
    pub baseline: Duration,
    /// Median time per call of the candidate.
    pub candidate: Duration,
    /// Median of the per-round ratios candidate / baseline.
    pub ratio: f64,
    /// The 25th and 75th percentiles of the per-round ratios.
    pub ratio_iqr: (f64, f64),
}

/// Times `routine` over `inputs`, keeping its outputs in `outputs` until the clock stops.
fn time<I, O>(routine: &mut impl FnMut(I) -> O, inputs: Vec<I>, outputs: &mut Vec<O>) -> Duration {
    let start = Instant::now();
    for input in inputs {
        outputs.push(std::hint::black_box(routine(std::hint::black_box(input))));
    }
    let elapsed = start.elapsed();
    outputs.clear();
    elapsed
}

/// Times `baseline` and `candidate` over `rounds` pairs of batches of `batch` calls each.
/// `make` builds one call's input before the clock starts; each routine consumes it, and its
/// output is kept until the batch's clock stops, then dropped.
pub fn compare<I, O1, O2>(
    rounds: usize,
    batch: usize,
    mut make: impl FnMut() -> I,
    mut baseline: impl FnMut(I) -> O1,
    mut candidate: impl FnMut(I) -> O2,
) -> Paired {
    let mut base_times = Vec::with_capacity(rounds);
    let mut cand_times = Vec::with_capacity(rounds);
    let mut ratios = Vec::with_capacity(rounds);
    let mut outputs1: Vec<O1> = Vec::with_capacity(batch);
    let mut outputs2: Vec<O2> = Vec::with_capacity(batch);
    // warm up
    for _ in 0..rounds.div_ceil(10) {
        time(
            &mut baseline,
            (0..batch).map(|_| make()).collect(),
            &mut outputs1,
        );
        time(
            &mut candidate,
            (0..batch).map(|_| make()).collect(),
            &mut outputs2,
        );
    }
    for round in 0..rounds {
        let a: Vec<I> = (0..batch).map(|_| make()).collect();
        let b: Vec<I> = (0..batch).map(|_| make()).collect();
        // Alternate which goes first, so neither always follows the other.
        let (tb, tc) = if round % 2 == 0 {
            let tb = time(&mut baseline, a, &mut outputs1);
            (tb, time(&mut candidate, b, &mut outputs2))
        } else {
            let tc = time(&mut candidate, a, &mut outputs2);
            (time(&mut baseline, b, &mut outputs1), tc)
        };
        base_times.push(tb);
        cand_times.push(tc);
        ratios.push(tc.as_secs_f64() / tb.as_secs_f64());
    }
    base_times.sort();
    cand_times.sort();
    ratios.sort_by(f64::total_cmp);
    let per_call = |d: Duration| d / u32::try_from(batch).expect("batch fits u32");
    Paired {
        baseline: per_call(base_times[rounds / 2]),
        candidate: per_call(cand_times[rounds / 2]),
        ratio: ratios[rounds / 2],
        ratio_iqr: (ratios[rounds / 4], ratios[rounds * 3 / 4]),
    }
}
