//! The normaliser: undoes, in the model's arguments, what a dialect's conversion added to what
//! a schema accepts, so that the tool decodes exactly what the converted schema let the model
//! send.
//!
//! OpenAI's strict mode requires every property, so the conversion lets an optional one also
//! accept `null` ([`Plan::null`] records where). A tool's own decoding need not accept that
//! `null` — a `#[serde(default)] tags: Vec<String>` field refuses it — so the agent removes such
//! a `null` before the tool sees the arguments, and the property is absent, as the original
//! schema allows. Only where the conversion added the `null`: one the original schema already
//! accepted (`Option<T>`) is left for the tool, which may give it a meaning of its own.
//!
//! The conversion builds a [`Plan`] per schema node, following `properties`, `items`, `anyOf`
//! and `$ref`s into `$defs`; [`Normaliser::new`] keeps only the parts that lead to a recorded
//! `null`, so a tool whose conversion added none has no normaliser and pays nothing. A value
//! that matches several members of an `anyOf` is normalised by the first member whose
//! converted schema accepts it (each such member is compiled into a validator, once, whose
//! `pattern`s are matched as the [`ArgumentValidator`](crate::tool::ArgumentValidator) matches them:
//! within its bounds, as part of the call's check).

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

/// How deep the normaliser follows a value: past the arguments' nesting limit, so it never
/// stops short of a value the tool would decode.
const MAX_DEPTH: usize = 160;

/// What to do to the values of one schema node, as the conversion builds it.
#[derive(Debug, Default)]
pub(super) struct Plan {
    /// Optional properties the conversion made nullable: a `null` there means absent.
    nulls: Vec<String>,
    /// Properties whose values may need work of their own.
    properties: Vec<(String, Plan)>,
    /// The array items' plan.
    items: Option<Box<Plan>>,
    /// The members of the node's `anyOf`, as converted, and their plans.
    any_of: Vec<(Value, Plan)>,
    /// The definition the node refers to (`$ref`).
    reference: Option<String>,
}

impl Plan {
    /// Records that the conversion made the optional property `name` nullable.
    pub(super) fn null(&mut self, name: &str) {
        self.nulls.push(name.to_owned());
    }

    pub(super) fn property(&mut self, name: &str, plan: Plan) {
        self.properties.push((name.to_owned(), plan));
    }

    pub(super) fn items(&mut self, plan: Plan) {
        self.items = Some(Box::new(plan));
    }

    pub(super) fn any_of(&mut self, members: Vec<(Value, Plan)>) {
        self.any_of = members;
    }

    pub(super) fn reference(&mut self, name: String) {
        self.reference = Some(name);
    }

    /// Whether the plan, or a definition it refers to (one of `live`), has a `null` to remove.
    fn has_work(&self, live: &HashSet<&str>) -> bool {
        !self.nulls.is_empty()
            || self.properties.iter().any(|(_, p)| p.has_work(live))
            || self.items.as_ref().is_some_and(|p| p.has_work(live))
            || self.any_of.iter().any(|(_, p)| p.has_work(live))
            || self
                .reference
                .as_deref()
                .is_some_and(|name| live.contains(name))
    }
}

/// Removes from a model's arguments the `null`s a dialect's conversion added. Built once per
/// tool, when the agent is.
pub(crate) struct Normaliser {
    root: Node,
    defs: Vec<Node>,
}

impl std::fmt::Debug for Normaliser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Normaliser").finish_non_exhaustive()
    }
}

/// A [`Plan`] with only its parts that lead to work, references as indexes into `defs`.
#[derive(Default)]
struct Node {
    nulls: Vec<String>,
    properties: Vec<(String, Node)>,
    items: Option<Box<Node>>,
    any_of: Vec<Member>,
    reference: Option<usize>,
}

struct Member {
    /// Tells whether a value is this member's; `None` when no other member can take a value
    /// that is not `null` (the other members are `{"type": "null"}`).
    matcher: Option<jsonschema::Validator>,
    node: Node,
}

impl Normaliser {
    /// The normaliser for a schema converted with `root` as its plan and `defs` as its
    /// definitions' plans; `converted` is the converted schema, whose `$defs` the members of an
    /// `anyOf` are checked against. `None` when there is nothing to remove.
    pub(super) fn new(
        root: Plan,
        defs: Vec<(String, Plan)>,
        converted: &Value,
    ) -> Result<Option<Self>, String> {
        // the definitions that have work, directly or through others: to a fixed point
        let mut live: HashSet<&str> = HashSet::new();
        loop {
            let before = live.len();
            for (name, plan) in &defs {
                if !live.contains(name.as_str()) && plan.has_work(&live) {
                    live.insert(name);
                }
            }
            if live.len() == before {
                break;
            }
        }
        if !root.has_work(&live) {
            return Ok(None);
        }
        let index: HashMap<&str, usize> = defs
            .iter()
            .filter(|(name, _)| live.contains(name.as_str()))
            .enumerate()
            .map(|(i, (name, _))| (name.as_str(), i))
            .collect();
        let definitions = ["$defs", "definitions"]
            .into_iter()
            .find_map(|key| Some((key, converted.get(key)?)));
        let compile = Compile {
            live: &live,
            index: &index,
            definitions,
        };
        let mut nodes = Vec::with_capacity(index.len());
        for (name, plan) in &defs {
            if live.contains(name.as_str()) {
                nodes.push(compile.node(plan)?);
            }
        }
        Ok(Some(Self {
            root: compile.node(&root)?,
            defs: nodes,
        }))
    }

    /// Removes the recorded `null`s from `arguments`.
    pub(crate) fn apply(&self, arguments: &mut Value) {
        self.apply_node(&self.root, arguments, 0);
    }

    fn apply_node(&self, node: &Node, value: &mut Value, depth: usize) {
        if depth > MAX_DEPTH || value.is_null() {
            return;
        }
        // which member of `anyOf` the value is, before this node changes it
        let member = node.any_of.iter().find(|member| {
            member
                .matcher
                .as_ref()
                .is_none_or(|matcher| matcher.is_valid(value))
        });
        match value {
            Value::Object(map) => {
                for name in &node.nulls {
                    if map.get(name).is_some_and(Value::is_null) {
                        map.shift_remove(name);
                    }
                }
                for (name, property) in &node.properties {
                    if let Some(value) = map.get_mut(name) {
                        self.apply_node(property, value, depth + 1);
                    }
                }
            }
            Value::Array(values) => {
                if let Some(items) = &node.items {
                    for value in values {
                        self.apply_node(items, value, depth + 1);
                    }
                }
            }
            _ => {}
        }
        if let Some(member) = member {
            self.apply_node(&member.node, value, depth + 1);
        }
        if let Some(i) = node.reference {
            self.apply_node(&self.defs[i], value, depth + 1);
        }
    }
}

struct Compile<'a> {
    live: &'a HashSet<&'a str>,
    index: &'a HashMap<&'a str, usize>,
    /// The converted schema's definitions, under the keyword it keeps them under.
    definitions: Option<(&'static str, &'a Value)>,
}

impl Compile<'_> {
    fn node(&self, plan: &Plan) -> Result<Node, String> {
        let properties = plan
            .properties
            .iter()
            .filter(|(_, p)| p.has_work(self.live))
            .map(|(name, p)| Ok((name.clone(), self.node(p)?)))
            .collect::<Result<_, String>>()?;
        let items = match &plan.items {
            Some(items) if items.has_work(self.live) => Some(Box::new(self.node(items)?)),
            _ => None,
        };
        let mut any_of = Vec::new();
        if plan.any_of.iter().any(|(_, p)| p.has_work(self.live)) {
            // members that take only `null` need no telling apart: a `null` has no work
            let others = plan
                .any_of
                .iter()
                .filter(|(schema, _)| !super::walk::is_null_schema(schema))
                .count();
            for (schema, member) in &plan.any_of {
                if super::walk::is_null_schema(schema) {
                    continue;
                }
                let matcher = if others > 1 {
                    Some(self.matcher(schema)?)
                } else {
                    None
                };
                any_of.push(Member {
                    matcher,
                    node: self.node(member)?,
                });
            }
        }
        Ok(Node {
            nulls: plan.nulls.clone(),
            properties,
            items,
            any_of,
            reference: plan
                .reference
                .as_deref()
                .and_then(|name| self.index.get(name).copied()),
        })
    }

    /// A validator of one converted member of an `anyOf`, with the converted definitions.
    fn matcher(&self, member: &Value) -> Result<jsonschema::Validator, String> {
        let mut schema = member.as_object().cloned().unwrap_or_else(Map::new);
        if let Some((keyword, definitions)) = self.definitions {
            schema.insert(keyword.to_owned(), definitions.clone());
        }
        let options = jsonschema::draft202012::options().should_validate_formats(false);
        crate::tool::bounded_patterns(options, Default::default())
            .build(&Value::Object(schema))
            .map_err(|error| format!("a member of `anyOf` does not compile: {error}"))
    }
}
