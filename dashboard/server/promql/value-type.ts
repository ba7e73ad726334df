/** The four types a PromQL expression evaluates to (docs/prometheus-api.md, "PromQL"). */
export type ValueType = "scalar" | "vector" | "matrix" | "string";
