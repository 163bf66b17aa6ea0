//! The objects, as etcd keeps them for the API server: one
//! `resourceVersion` counter for everything, each write an event in a
//! history that watches replay from any version and follow.

use std::collections::BTreeMap;

use serde_json::Value;

use super::kinds::Kind;

/// Where an object lives: its kind, namespace (`""` when cluster-wide)
/// and name.
pub type Key = (&'static Kind, String, String);

/// A change, as a watch reports it.
#[derive(Debug, Clone)]
pub struct Event {
    /// `ADDED`, `MODIFIED` or `DELETED`.
    pub kind: &'static str,
    /// The resourceVersion the change made.
    pub rv: u64,
    /// The object's kind.
    pub of: &'static Kind,
    /// The object's namespace.
    pub namespace: String,
    /// The object after the change (as it was last, for `DELETED`).
    pub object: Value,
    /// The object before the change (`None` for `ADDED`), so a watch
    /// with a selector sees an object leave or enter it.
    pub before: Option<Value>,
}

/// The objects and their history.
#[derive(Debug, Default)]
pub struct Store {
    objects: BTreeMap<(String, String, String), Value>,
    rv: u64,
    history: Vec<Event>,
}

fn id(key: &Key) -> (String, String, String) {
    (key.0.qualified(), key.1.clone(), key.2.clone())
}

impl Store {
    /// A store whose first write is version `start + 1`.
    pub fn starting_at(start: u64) -> Self {
        Self { rv: start, ..Self::default() }
    }

    /// The newest resourceVersion.
    pub fn rv(&self) -> u64 {
        self.rv
    }

    /// The object at `key`.
    pub fn get(&self, key: &Key) -> Option<&Value> {
        self.objects.get(&id(key))
    }

    /// The objects of `kind`, in `namespace` (`None`: all), by name.
    pub fn list(&self, kind: &Kind, namespace: Option<&str>) -> Vec<Value> {
        let q = kind.qualified();
        self.objects
            .iter()
            .filter(|((k, ns, _), _)| *k == q && namespace.is_none_or(|n| n == ns))
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// Writes `object` at `key` with a new resourceVersion and answers it
    /// as stored: `ADDED` when new, `MODIFIED` otherwise.
    pub fn put(&mut self, key: &Key, mut object: Value) -> Value {
        self.rv += 1;
        object["metadata"]["resourceVersion"] = Value::String(self.rv.to_string());
        let before = self.objects.insert(id(key), object.clone());
        let kind = if before.is_some() { "MODIFIED" } else { "ADDED" };
        self.history.push(Event {
            kind,
            rv: self.rv,
            of: key.0,
            namespace: key.1.clone(),
            object: object.clone(),
            before,
        });
        object
    }

    /// Removes the object at `key`, answering it as it was last.
    pub fn remove(&mut self, key: &Key) -> Option<Value> {
        let mut object = self.objects.remove(&id(key))?;
        self.rv += 1;
        object["metadata"]["resourceVersion"] = Value::String(self.rv.to_string());
        self.history.push(Event {
            kind: "DELETED",
            rv: self.rv,
            of: key.0,
            namespace: key.1.clone(),
            object: object.clone(),
            before: None,
        });
        Some(object)
    }

    /// The changes after version `rv` to objects of `kind` in `namespace`
    /// (`None`: all).
    pub fn since(&self, rv: u64, kind: &Kind, namespace: Option<&str>) -> Vec<Event> {
        let start = self.history.partition_point(|e| e.rv <= rv);
        self.history[start..]
            .iter()
            .filter(|e| e.of == kind && namespace.is_none_or(|n| n == e.namespace))
            .cloned()
            .collect()
    }
}
