//! The header's JSON Schema (the task schema's `header`): one string per field,
//! the required ones [`super::FIELDS`] without [`super::OPTIONAL`], and the
//! header's own YES/NO rules.
use serde_json::{json, Value};

/// The header as a JSON object of strings.
pub(crate) fn header_schema() -> Value {
    let required: Vec<&str> = super::FIELDS
        .iter()
        .filter(|f| !super::OPTIONAL.contains(f))
        .copied()
        .collect();
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": required,
        "properties": {
            "TASK_ID": {
                "type": "string",
                "pattern": "^[A-Za-z0-9_-]{1,64}$"
            },
            "TASK_TITLE": {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "pattern": "^[^\\r\\n]*\\S[^\\r\\n]*$"
            },
            "SOURCE_BRANCH": {
                "type": "string",
                "minLength": 1,
                "description": "must equal the watched branch (checked by rxnode validate)"
            },
            "EXPECTED_HEAD": {
                "type": "string",
                "pattern": "^[0-9a-fA-F]{40}$",
                "description": "a strict ancestor of the commit that holds the task (checked by the watcher)"
            },
            "REQUIRES_APPROVAL": {
                "const": "YES"
            },
            "HARDWARE_ACCESS": {
                "enum": [
                    "YES",
                    "NO"
                ]
            },
            "RF_RX": {
                "enum": [
                    "YES",
                    "NO"
                ]
            },
            "RF_TX": {
                "enum": [
                    "YES",
                    "NO"
                ]
            },
            "ALLOW_COMMIT": {
                "enum": [
                    "YES",
                    "NO"
                ]
            },
            "ALLOW_PUSH": {
                "enum": [
                    "NO",
                    "RX_RESULT_ONLY"
                ]
            },
            "RISK_LEVEL": {
                "enum": [
                    "GREEN",
                    "YELLOW",
                    "RED"
                ],
                "description": "never lower than the derived risk; a higher one is kept"
            },
            "TARGET_NODES": {
                "type": "string",
                "pattern": "^[A-Za-z0-9_-]{1,32}([ \\t]*,[ \\t]*[A-Za-z0-9_-]{1,32})*$",
                "description": "the node names (as `rxnode node set-name` sets them) the task is for, comma-separated, each at most once; a node not listed records the task as not for it and never prompts or runs it; absent: every node"
            }
        },
        "allOf": [
            {
                "if": {
                    "properties": {
                        "RF_RX": {
                            "const": "YES"
                        }
                    }
                },
                "then": {
                    "properties": {
                        "HARDWARE_ACCESS": {
                            "const": "YES"
                        }
                    }
                }
            },
            {
                "if": {
                    "properties": {
                        "RF_TX": {
                            "const": "YES"
                        }
                    }
                },
                "then": {
                    "properties": {
                        "HARDWARE_ACCESS": {
                            "const": "YES"
                        },
                        "RISK_LEVEL": {
                            "const": "RED"
                        }
                    }
                }
            },
            {
                "if": {
                    "anyOf": [
                        {
                            "properties": {
                                "HARDWARE_ACCESS": {
                                    "const": "YES"
                                }
                            }
                        },
                        {
                            "properties": {
                                "RF_RX": {
                                    "const": "YES"
                                }
                            }
                        }
                    ]
                },
                "then": {
                    "properties": {
                        "RISK_LEVEL": {
                            "enum": [
                                "YELLOW",
                                "RED"
                            ]
                        }
                    }
                }
            }
        ]
    })
}

#[cfg(test)]
mod tests {
    /// The schema names exactly the fields the parser knows.
    #[test]
    fn the_schema_has_the_parsers_fields() {
        let s = super::header_schema();
        let mut have: Vec<&str> = s["properties"]
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        have.sort_unstable();
        let mut want = super::super::FIELDS.to_vec();
        want.sort_unstable();
        assert_eq!(have, want);
    }
}
