//! `inventory`: the radios the `inventory` step found.
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The `inventory` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum Inventory {
    /// What this build writes.
    Devices(Devices),
    /// What another build wrote in another shape (a bare device list, …): kept
    /// as it is.
    #[schemars(schema_with = "super::untyped::any_inventory")]
    Other(Value),
}

/// The devices found, each as `rxnode inventory` probes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Devices {
    /// One per radio SoapySDR enumerated.
    pub(crate) devices: Vec<rxnode_hw::DeviceInfo>,
}

impl Inventory {
    /// The devices found.
    pub(crate) fn of(devices: Vec<rxnode_hw::DeviceInfo>) -> Inventory {
        Inventory::Devices(Devices { devices })
    }

    /// `null` written by another build where this one writes nothing.
    pub(crate) fn is_null(&self) -> bool {
        matches!(self, Inventory::Other(Value::Null))
    }

    /// How many devices it lists, when that can be told.
    pub(crate) fn device_count(&self) -> Option<usize> {
        match self {
            Inventory::Devices(d) => Some(d.devices.len()),
            Inventory::Other(v) => v
                .as_array()
                .or_else(|| v.get("devices").and_then(Value::as_array))
                .map(Vec::len),
        }
    }
}
