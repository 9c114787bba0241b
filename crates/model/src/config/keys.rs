//! The keys each scenario section accepts, read from the structs serde fills (the field list a derived
//! `Deserialize` hands its deserializer), so that the reference and the documentation test compare
//! themselves with what the core reads rather than with a copy of it.

use super::{
    BackgroundConfig, CdfConfig, FaultConfig, FlowsConfig, IncastConfig, PartitionAggregateConfig, RetrievalConfig, RunConfig, SequentialConfig,
    TopologyConfig, WORKLOAD_KINDS,
};
use serde::de::value::Error;
use serde::de::{Deserialize, Deserializer, Error as _, Visitor};

/// A deserializer that records the fields a struct asks for and stops there.
struct Probe<'a>(&'a mut Vec<&'static str>);

impl<'de> Deserializer<'de> for Probe<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Error> {
        Err(Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(self, _: &'static str, fields: &'static [&'static str], _: V) -> Result<V::Value, Error> {
        self.0.extend_from_slice(fields);
        Err(Error::custom("probed"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit unit_struct
        newtype_struct seq tuple tuple_struct map enum identifier ignored_any
    }
}

/// The keys serde reads for `T` (a struct deriving `Deserialize`), in declaration order.
pub fn struct_keys<T: for<'de> Deserialize<'de>>() -> Vec<&'static str> {
    let mut keys = Vec::new();
    let _ = T::deserialize(Probe(&mut keys));
    keys
}

/// Every section of a scenario whose keys are a struct's, and those keys: `run`, `topology`, `fault`, and
/// `workload.<kind>` for each kind the core reads (`kind` itself is the table's tag, not listed).
/// `[scheme]` is the knob tables' (`knob_table`).
pub fn section_keys() -> Vec<(String, Vec<&'static str>)> {
    let mut out = vec![
        ("run".to_string(), struct_keys::<RunConfig>()),
        ("topology".to_string(), struct_keys::<TopologyConfig>()),
        ("fault".to_string(), struct_keys::<FaultConfig>()),
    ];
    for kind in WORKLOAD_KINDS {
        let keys = match *kind {
            "retrieval" => struct_keys::<RetrievalConfig>(),
            "background" => struct_keys::<BackgroundConfig>(),
            "flows" => struct_keys::<FlowsConfig>(),
            "sequential" => struct_keys::<SequentialConfig>(),
            "partition_aggregate" => struct_keys::<PartitionAggregateConfig>(),
            "incast" => struct_keys::<IncastConfig>(),
            "cdf" => struct_keys::<CdfConfig>(),
            other => unreachable!("workload kind {other} has no table here"),
        };
        out.push((format!("workload.{kind}"), keys));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_keys_are_the_ones_serde_accepts() {
        let all = section_keys();
        let run = &all.iter().find(|(s, _)| s == "run").unwrap().1;
        assert!(run.contains(&"duration") && run.contains(&"threads") && run.contains(&"keep_load"), "{run:?}");
        let incast = &all.iter().find(|(s, _)| s == "workload.incast").unwrap().1;
        assert_eq!(incast, &vec!["receiver", "senders", "total", "repeats", "gap", "start", "priority", "request_size", "server_time"]);
        assert_eq!(all.len(), 3 + WORKLOAD_KINDS.len());
        assert!(all.iter().all(|(_, k)| !k.is_empty()));
    }
}
