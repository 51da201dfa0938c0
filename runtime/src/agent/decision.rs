//! The caller's answers to a stopped run: a [`Decision`] (a [`Verdict`], bound to the call it
//! was made for by its [`CallDigest`]), [`Decisions`] by call id, their JSON forms, and what is
//! wrong with a set of decisions for the calls that wait (`Refusal`).

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

use serde::de::{self, MapAccess, Unexpected, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::approval::{PendingCall, PendingReason};
use super::digest::CallDigest;

/// What to do with a [`PendingCall`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Verdict {
    /// Run the call: approve it, or run a call whose effect was unknown again (after you made
    /// sure it did not take effect).
    Approve,
    /// Do not run the call. The model is told `Tool 'NAME' was not approved` (for a call whose
    /// effect was unknown: that it was interrupted and not run again); the refusal is recorded
    /// like any other and never satisfies a prerequisite.
    Reject,
    /// The call whose effect was unknown did take effect, with this output: it is recorded as
    /// applied and the model is shown the output, as if the tool had returned it. Only for
    /// calls whose reason is [`PendingReason::Unknown`].
    Applied(Value),
}

/// The caller's answer for one [`PendingCall`]: a [`Verdict`], and the [`CallDigest`] of the
/// call it was made for.
///
/// A decision made from the pending call ([`Decisions::approve`], [`Decision::for_call`])
/// carries the call's digest — its tool and arguments — and
/// [`Agent::resume`](crate::Agent::resume) refuses it unless the call that waits under its id
/// is that same call: a stored state edited to put another tool or other arguments under an
/// approved call's id runs nothing.
///
/// A decision given by call id alone (`digest: None`, as a UI that knows only ids writes
/// `"reject"`) can reject a call: that runs nothing, whatever the call is. It cannot approve a
/// call or mark one applied: `resume` refuses those, saying to give the pending call's digest,
/// since nothing would tie them to the call the person saw.
///
/// In JSON (`DIGEST` is the pending call's `digest`, 64 hexadecimal digits):
///
/// | verdict | bound to the call | by id alone |
/// |---|---|---|
/// | [`Verdict::Approve`] | `{"approve": DIGEST}` | `"approve"` (refused by `resume`) |
/// | [`Verdict::Reject`] | `{"reject": DIGEST}` | `"reject"` |
/// | [`Verdict::Applied`] | `{"applied": OUTPUT, "digest": DIGEST}` | `{"applied": OUTPUT}` (refused by `resume`) |
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Decision {
    /// What to do with the call.
    pub verdict: Verdict,
    /// The digest of the call the decision was made for; `None`: given by call id alone.
    pub digest: Option<CallDigest>,
}

impl Decision {
    /// `verdict` for the call `call`, bound to it by its digest.
    pub fn for_call(call: &PendingCall, verdict: Verdict) -> Self {
        Self::new(verdict, Some(call.digest()))
    }

    /// `verdict` for the call whose digest is `digest` (as a pending call's `digest` gives
    /// it), or, with `None`, for whatever call waits under the id it is given for — which only
    /// a rejection may be.
    pub fn new(verdict: Verdict, digest: Option<CallDigest>) -> Self {
        Self { verdict, digest }
    }
}

/// The JSON forms of a decision, for error messages.
const FORMS: &str = "\"approve\", \"reject\", {\"applied\": OUTPUT}, or bound to the call by \
                     its pending call's digest: {\"approve\": DIGEST}, {\"reject\": DIGEST}, \
                     {\"applied\": OUTPUT, \"digest\": DIGEST}";

impl Serialize for Decision {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let key = match (&self.verdict, &self.digest) {
            (Verdict::Approve, None) => return serializer.serialize_str("approve"),
            (Verdict::Reject, None) => return serializer.serialize_str("reject"),
            (Verdict::Approve, Some(_)) => "approve",
            (Verdict::Reject, Some(_)) => "reject",
            (Verdict::Applied(output), digest) => {
                let mut map = serializer.serialize_map(Some(1 + usize::from(digest.is_some())))?;
                map.serialize_entry("applied", output)?;
                if let Some(digest) = digest {
                    map.serialize_entry("digest", digest)?;
                }
                return map.end();
            }
        };
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry(key, &self.digest)?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for Decision {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(DecisionVisitor)
    }
}

struct DecisionVisitor;

impl<'de> Visitor<'de> for DecisionVisitor {
    type Value = Decision;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a decision: {FORMS}")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Decision, E> {
        match text {
            "approve" => Ok(Decision::new(Verdict::Approve, None)),
            "reject" => Ok(Decision::new(Verdict::Reject, None)),
            _ => Err(E::invalid_value(Unexpected::Str(text), &self)),
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Decision, A::Error> {
        fn once<T, E: de::Error>(
            slot: &mut Option<T>,
            value: T,
            key: &'static str,
        ) -> Result<(), E> {
            match slot.replace(value) {
                None => Ok(()),
                Some(_) => Err(E::duplicate_field(key)),
            }
        }
        const KEYS: &[&str] = &["approve", "reject", "applied", "digest"];
        let (mut approve, mut reject, mut applied, mut digest) = (None, None, None, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "approve" => once(&mut approve, map.next_value::<CallDigest>()?, "approve")?,
                "reject" => once(&mut reject, map.next_value::<CallDigest>()?, "reject")?,
                "applied" => once(&mut applied, map.next_value::<Value>()?, "applied")?,
                "digest" => once(&mut digest, map.next_value::<CallDigest>()?, "digest")?,
                other => return Err(de::Error::unknown_field(other, KEYS)),
            }
        }
        match (approve, reject, applied, digest) {
            (Some(call), None, None, None) => Ok(Decision::new(Verdict::Approve, Some(call))),
            (None, Some(call), None, None) => Ok(Decision::new(Verdict::Reject, Some(call))),
            (None, None, Some(output), digest) => {
                Ok(Decision::new(Verdict::Applied(output), digest))
            }
            _ => Err(de::Error::custom(format_args!(
                "a decision is one of {FORMS}"
            ))),
        }
    }
}

/// The caller's decisions for the calls a stopped run waits on, by call id: one decision per
/// call.
///
/// Build them from the run's [`PendingCall`]s, which binds each decision to its call (see
/// [`Decision`]):
///
/// ```
/// use reticent::{Agent, Decisions, ModelResponse, ScriptedModel, ToolCall, agent::Verdict};
/// use serde_json::json;
///
/// /// Refund an order.
/// #[reticent::tool(needs_approval)]
/// fn refund(order_id: String) -> String {
///     format!("refunded {order_id}")
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let model = ScriptedModel::new(vec![ModelResponse::tool_calls(vec![
///     ToolCall::new("call_3", "refund", json!({"order_id": "ORD-7"})),
///     ToolCall::new("call_4", "refund", json!({"order_id": "ORD-8"})),
/// ])]);
/// let paused = Agent::builder(model).tool(Refund).build()?.run("Refund both").await?;
/// let [first, second] = &paused.pending[..] else { unreachable!() };
///
/// let decisions = Decisions::new().approve(first).reject(second);
/// assert!(decisions.problems(&paused.pending).is_empty());
/// assert_eq!(decisions.get("call_3").unwrap().verdict, Verdict::Approve);
/// // In JSON, each decision names its call by the pending call's digest.
/// assert_eq!(
///     serde_json::to_value(&decisions)?,
///     json!({
///         "call_3": {"approve": first.digest().to_string()},
///         "call_4": {"reject": second.digest().to_string()},
///     })
/// );
/// // A call decided twice is refused, in JSON as in code.
/// let twice = r#"{"call_3": "reject", "call_3": "approve"}"#;
/// assert!(serde_json::from_str::<Decisions>(twice).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decisions {
    /// The first decision for each call.
    by_id: BTreeMap<String, Decision>,
    /// Every later decision for a call decided already, in the order given: kept, so that a
    /// call decided twice is refused rather than decided by whichever came last.
    again: Vec<(String, Decision)>,
}

impl Decisions {
    /// No decisions: resumes a run that waits on no call.
    pub fn new() -> Self {
        Self::default()
    }

    /// Approves `call` (or runs a call whose effect was unknown again): it runs, if it is the
    /// call that waits under its id when the run resumes.
    #[must_use]
    pub fn approve(self, call: &PendingCall) -> Self {
        self.decide(
            call.call_id.clone(),
            Decision::for_call(call, Verdict::Approve),
        )
    }

    /// Rejects `call`: it does not run.
    #[must_use]
    pub fn reject(self, call: &PendingCall) -> Self {
        self.decide(
            call.call_id.clone(),
            Decision::for_call(call, Verdict::Reject),
        )
    }

    /// Records that `call`, whose effect was unknown, took effect with `output`.
    #[must_use]
    pub fn applied(self, call: &PendingCall, output: Value) -> Self {
        self.decide(
            call.call_id.clone(),
            Decision::for_call(call, Verdict::Applied(output)),
        )
    }

    /// Adds `decision` for the call `call_id`. A call decided twice is a problem
    /// ([`Decisions::problems`]) and [`Agent::resume`](crate::Agent::resume) refuses it: the
    /// second decision never silently replaces the first.
    #[must_use]
    pub fn decide(mut self, call_id: impl Into<String>, decision: Decision) -> Self {
        match self.by_id.entry(call_id.into()) {
            Entry::Vacant(entry) => {
                entry.insert(decision);
            }
            Entry::Occupied(entry) => self.again.push((entry.key().clone(), decision)),
        }
        self
    }

    /// The decision for `call_id` (the first, if it was decided twice).
    pub fn get(&self, call_id: &str) -> Option<&Decision> {
        self.by_id.get(call_id)
    }

    /// What is wrong with these decisions for the calls `pending` lists, each thing in a
    /// sentence; empty when they fit: every call has one decision, made for that call (its
    /// digest matches), no decision names a call that does not wait, an approval or `applied`
    /// names its call by digest, and only a call whose effect is unknown is marked applied.
    /// [`Agent::resume`](crate::Agent::resume) checks the same; an endpoint that takes a
    /// person's decisions can check them at once.
    pub fn problems(&self, pending: &[PendingCall]) -> Vec<String> {
        Refusal::of(self, pending).sentences()
    }

    /// Every decision, by call id: the first decision of each call in id order, then any
    /// later decision of a call decided twice.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Decision)> {
        self.by_id
            .iter()
            .chain(self.again.iter().map(|(id, decision)| (id, decision)))
            .map(|(id, decision)| (id.as_str(), decision))
    }

    /// How many decisions were given.
    pub fn len(&self) -> usize {
        self.by_id.len() + self.again.len()
    }

    /// Whether no call is decided.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// The calls decided more than once, each once, in the order of their second decision.
    fn decided_twice(&self) -> Vec<&str> {
        let mut ids: Vec<&str> = Vec::new();
        for (id, _) in &self.again {
            if !ids.contains(&id.as_str()) {
                ids.push(id);
            }
        }
        ids
    }
}

impl FromIterator<(String, Decision)> for Decisions {
    /// The decisions in the order given; a call decided twice stays decided twice.
    fn from_iter<I: IntoIterator<Item = (String, Decision)>>(iter: I) -> Self {
        iter.into_iter()
            .fold(Self::new(), |decisions, (id, decision)| {
                decisions.decide(id, decision)
            })
    }
}

/// A JSON object by call id. A call decided twice is written twice, so that it is refused when
/// read back, as it would be here.
impl Serialize for Decisions {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (id, decision) in self.iter() {
            map.serialize_entry(id, decision)?;
        }
        map.end()
    }
}

/// A JSON object by call id; a call decided twice (`{"c1": "reject", "c1": "approve"}`) is an
/// error, never the last decision.
impl<'de> Deserialize<'de> for Decisions {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct DecisionsVisitor;
        impl<'de> Visitor<'de> for DecisionsVisitor {
            type Value = Decisions;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of decisions by call id")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Decisions, A::Error> {
                let mut decisions = Decisions::new();
                while let Some(id) = map.next_key::<String>()? {
                    if decisions.by_id.contains_key(&id) {
                        return Err(de::Error::custom(format_args!(
                            "the call `{id}` is decided twice; give each call one decision"
                        )));
                    }
                    let decision = map.next_value::<Decision>()?;
                    decisions.by_id.insert(id, decision);
                }
                Ok(decisions)
            }
        }
        deserializer.deserialize_map(DecisionsVisitor)
    }
}

/// What is wrong with the decisions given to resume a state.
#[derive(Debug, Default)]
pub(crate) struct Refusal {
    pub(crate) undecided: Vec<PendingCall>,
    pub(crate) invalid: Vec<String>,
}

impl Refusal {
    /// What is wrong with `decisions` for the calls `waiting` on one.
    pub(crate) fn of(decisions: &Decisions, waiting: &[PendingCall]) -> Self {
        let mut refusal = Self {
            undecided: Vec::new(),
            invalid: shared_ids(waiting.iter().map(|call| call.call_id.as_str())),
        };
        for call in waiting {
            match decisions.get(&call.call_id) {
                None => refusal.undecided.push(call.clone()),
                Some(decision) => refusal.invalid.extend(misfit(call, decision)),
            }
        }
        for call_id in decisions.decided_twice() {
            refusal.invalid.push(format!(
                "the call `{call_id}` is decided twice; give each call one decision"
            ));
        }
        for call_id in decisions.by_id.keys() {
            if !waiting.iter().any(|call| &call.call_id == call_id) {
                refusal.invalid.push(format!(
                    "there is a decision for `{call_id}`, which is not waiting for one"
                ));
            }
        }
        refusal
    }

    /// Whether nothing is wrong.
    pub(crate) fn is_empty(&self) -> bool {
        self.undecided.is_empty() && self.invalid.is_empty()
    }

    /// Each thing wrong, in a sentence.
    pub(crate) fn sentences(&self) -> Vec<String> {
        let undecided = self.undecided.iter().map(|call| match call.reason {
            PendingReason::Approval => format!(
                "call `{}` of `{}` awaits approval and has no decision",
                call.call_id, call.tool
            ),
            _ => format!(
                "call `{}` of `{}` was cut off and may have taken effect: reconcile it, then \
                 approve it (to run it again), reject it, or mark it applied",
                call.call_id, call.tool
            ),
        });
        undecided.chain(self.invalid.iter().cloned()).collect()
    }
}

/// A sentence for each id that more than one of `ids` has: a decision by id cannot tell
/// those calls apart.
pub(crate) fn shared_ids<'a>(ids: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    let mut order = Vec::new();
    for id in ids {
        let count = counts.entry(id).or_insert(0);
        *count += 1;
        if *count == 2 {
            order.push(id);
        }
    }
    order
        .into_iter()
        .map(|id| {
            format!(
                "{} calls have the id `{id}`, and a decision cannot tell them apart",
                counts[id]
            )
        })
        .collect()
}

/// What is wrong with `decision` for `call`, if anything.
fn misfit(call: &PendingCall, decision: &Decision) -> Option<String> {
    let (id, tool) = (&call.call_id, &call.tool);
    match (&decision.verdict, decision.digest) {
        (_, Some(digest)) if digest != call.digest() => Some(format!(
            "the decision for `{id}` was made for another call: the call that waits under that \
             id (`{tool}`) differs in its tool or its arguments from the one decided on"
        )),
        (Verdict::Applied(_), _) if call.reason == PendingReason::Approval => Some(format!(
            "`{id}` ({tool}) waits for approval and never ran: it can be approved or rejected, \
             not applied"
        )),
        (Verdict::Approve, None) => Some(format!(
            "the approval of `{id}` ({tool}) does not say which call it approves: approve the \
             pending call itself (`Decisions::approve`), or give its digest \
             (`{{\"approve\": DIGEST}}`)"
        )),
        (Verdict::Applied(_), None) => Some(format!(
            "`{id}` ({tool}) is marked applied without saying which call took effect: mark the \
             pending call itself (`Decisions::applied`), or give its digest \
             (`{{\"applied\": OUTPUT, \"digest\": DIGEST}}`)"
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{CallDigest, Decision, Decisions, Verdict};

    fn digest() -> CallDigest {
        CallDigest::of("refund", &json!({"order_id": "ORD-7"}))
    }

    #[test]
    fn each_form_reads_back_as_it_was_written() {
        let d = digest();
        for (decision, written) in [
            (Decision::new(Verdict::Approve, None), json!("approve")),
            (Decision::new(Verdict::Reject, None), json!("reject")),
            (
                Decision::new(Verdict::Applied(json!("done")), None),
                json!({"applied": "done"}),
            ),
            (
                Decision::new(Verdict::Approve, Some(d)),
                json!({"approve": d.to_string()}),
            ),
            (
                Decision::new(Verdict::Reject, Some(d)),
                json!({"reject": d.to_string()}),
            ),
            (
                Decision::new(Verdict::Applied(json!({"id": 1})), Some(d)),
                json!({"applied": {"id": 1}, "digest": d.to_string()}),
            ),
        ] {
            assert_eq!(serde_json::to_value(&decision).unwrap(), written);
            assert_eq!(
                serde_json::from_value::<Decision>(written).unwrap(),
                decision
            );
        }
    }

    #[test]
    fn a_decision_in_no_known_form_is_refused_with_the_forms() {
        let d = digest().to_string();
        for bad in [
            json!("approved"),
            json!({"approve": d, "reject": d}),
            json!({"approve": d, "digest": d}),
            json!({"digest": d}),
            json!({}),
            json!({"approve": "not a digest"}),
            json!({"approve": d, "because": "yes"}),
            json!(true),
        ] {
            let error = serde_json::from_value::<Decision>(bad.clone()).unwrap_err();
            assert!(
                error.to_string().contains("approve") || error.to_string().contains("call digest"),
                "{bad}: {error}"
            );
        }
        let error = serde_json::from_value::<Decision>(json!({"approve": d, "reject": d}))
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("a decision is one of \"approve\""),
            "{error}"
        );
    }

    #[test]
    fn a_call_decided_twice_is_refused_in_json() {
        for twice in [
            r#"{"c1": "reject", "c1": "approve"}"#,
            r#"{"c1": "approve", "c2": "reject", "c1": "approve"}"#,
        ] {
            let error = serde_json::from_str::<Decisions>(twice).unwrap_err();
            assert!(
                error
                    .to_string()
                    .starts_with("the call `c1` is decided twice; give each call one decision"),
                "{error}"
            );
        }
    }

    #[test]
    fn a_call_decided_twice_in_code_stays_decided_twice_in_json() {
        let twice = Decisions::new()
            .decide("c1", Decision::new(Verdict::Reject, None))
            .decide("c1", Decision::new(Verdict::Approve, Some(digest())));
        assert_eq!(twice.len(), 2);
        assert_eq!(twice.get("c1").unwrap().verdict, Verdict::Reject);
        let json = serde_json::to_string(&twice).unwrap();
        assert!(serde_json::from_str::<Decisions>(&json).is_err(), "{json}");
        let collected: Decisions = twice
            .iter()
            .map(|(id, decision)| (id.to_owned(), decision.clone()))
            .collect();
        assert_eq!(collected, twice);
    }
}
