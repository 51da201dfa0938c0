//! Recording the spans a test makes: the kit's recorder, `reticent::testing::spans`.

pub use reticent::testing::spans::{CaptureGuard, EventRecord, SpanRecord, Spans, capture_spans};
