/**
 * The part of the OTLP trace and logs schemas ingest reads, as a protobufjs JSON descriptor (see
 * docs/decisions/0005-ingest.md, docs/decisions/0041-otlp-grpc-and-logs.md). Field names and
 * numbers follow opentelemetry-proto (collector/{trace,logs}/v1/*_service.proto, trace/v1/trace.proto,
 * logs/v1/logs.proto, common/v1/common.proto, resource/v1/resource.proto), google/rpc/status.proto
 * and google/rpc/error_details.proto (RetryInfo); fields ingest does not read are left out, and
 * protobufjs skips them on the wire as it skips any unknown field.
 */
import protobuf from "protobufjs";

const KeyValue = { fields: { key: { type: "string", id: 1 }, value: { type: "AnyValue", id: 2 } } };
const AnyValue = {
  oneofs: {
    value: {
      oneof: ["stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue", "bytesValue"],
    },
  },
  fields: {
    stringValue: { type: "string", id: 1 },
    boolValue: { type: "bool", id: 2 },
    intValue: { type: "int64", id: 3 },
    doubleValue: { type: "double", id: 4 },
    arrayValue: { type: "ArrayValue", id: 5 },
    kvlistValue: { type: "KeyValueList", id: 6 },
    bytesValue: { type: "bytes", id: 7 },
  },
};

const LogRecord = {
  fields: {
    timeUnixNano: { type: "fixed64", id: 1 },
    severityNumber: { type: "int32", id: 2 },
    attributes: { rule: "repeated", type: "opentelemetry.proto.common.v1.KeyValue", id: 6 },
    observedTimeUnixNano: { type: "fixed64", id: 11 },
  },
};

const logs = {
  nested: {
    v1: {
      nested: {
        ResourceLogs: {
          fields: {
            resource: { type: "opentelemetry.proto.resource.v1.Resource", id: 1 },
            scopeLogs: { rule: "repeated", type: "ScopeLogs", id: 2 },
          },
        },
        ScopeLogs: { fields: { logRecords: { rule: "repeated", type: "LogRecord", id: 2 } } },
        LogRecord,
      },
    },
  },
};

const collectorLogs = {
  nested: {
    v1: {
      nested: {
        ExportLogsServiceRequest: {
          fields: { resourceLogs: { rule: "repeated", type: "opentelemetry.proto.logs.v1.ResourceLogs", id: 1 } },
        },
        ExportLogsServiceResponse: { fields: { partialSuccess: { type: "ExportLogsPartialSuccess", id: 1 } } },
        ExportLogsPartialSuccess: {
          fields: { rejectedLogRecords: { type: "int64", id: 1 }, errorMessage: { type: "string", id: 2 } },
        },
      },
    },
  },
};

const google = {
  nested: {
    protobuf: {
      nested: {
        Any: { fields: { typeUrl: { type: "string", id: 1 }, value: { type: "bytes", id: 2 } } },
        Duration: { fields: { seconds: { type: "int64", id: 1 }, nanos: { type: "int32", id: 2 } } },
      },
    },
    rpc: {
      nested: {
        Status: {
          fields: {
            code: { type: "int32", id: 1 },
            message: { type: "string", id: 2 },
            details: { rule: "repeated", type: "google.protobuf.Any", id: 3 },
          },
        },
        RetryInfo: { fields: { retryDelay: { type: "google.protobuf.Duration", id: 1 } } },
      },
    },
  },
};

const descriptor = {
  nested: {
    opentelemetry: {
      nested: {
        proto: {
          nested: {
            common: {
              nested: {
                v1: {
                  nested: {
                    AnyValue,
                    ArrayValue: { fields: { values: { rule: "repeated", type: "AnyValue", id: 1 } } },
                    KeyValueList: { fields: { values: { rule: "repeated", type: "KeyValue", id: 1 } } },
                    KeyValue,
                  },
                },
              },
            },
            resource: {
              nested: {
                v1: {
                  nested: {
                    Resource: {
                      fields: {
                        attributes: { rule: "repeated", type: "opentelemetry.proto.common.v1.KeyValue", id: 1 },
                      },
                    },
                  },
                },
              },
            },
            trace: {
              nested: {
                v1: {
                  nested: {
                    ResourceSpans: {
                      fields: {
                        resource: { type: "opentelemetry.proto.resource.v1.Resource", id: 1 },
                        scopeSpans: { rule: "repeated", type: "ScopeSpans", id: 2 },
                      },
                    },
                    ScopeSpans: { fields: { spans: { rule: "repeated", type: "Span", id: 2 } } },
                    Span: {
                      fields: {
                        parentSpanId: { type: "bytes", id: 4 },
                        name: { type: "string", id: 5 },
                        kind: { type: "int32", id: 6 },
                        startTimeUnixNano: { type: "fixed64", id: 7 },
                        endTimeUnixNano: { type: "fixed64", id: 8 },
                        attributes: { rule: "repeated", type: "opentelemetry.proto.common.v1.KeyValue", id: 9 },
                        status: { type: "Status", id: 15 },
                      },
                    },
                    Status: { fields: { message: { type: "string", id: 2 }, code: { type: "int32", id: 3 } } },
                  },
                },
              },
            },
            logs,
            collector: {
              nested: {
                logs: collectorLogs,
                trace: {
                  nested: {
                    v1: {
                      nested: {
                        ExportTraceServiceRequest: {
                          fields: {
                            resourceSpans: {
                              rule: "repeated",
                              type: "opentelemetry.proto.trace.v1.ResourceSpans",
                              id: 1,
                            },
                          },
                        },
                        ExportTraceServiceResponse: {
                          fields: { partialSuccess: { type: "ExportTracePartialSuccess", id: 1 } },
                        },
                        ExportTracePartialSuccess: {
                          fields: {
                            rejectedSpans: { type: "int64", id: 1 },
                            errorMessage: { type: "string", id: 2 },
                          },
                        },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
    google,
  },
};

const root = protobuf.Root.fromJSON(descriptor);

export const ExportTraceServiceRequest = root.lookupType(
  "opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest",
);
export const ExportTraceServiceResponse = root.lookupType(
  "opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse",
);
export const ExportLogsServiceRequest = root.lookupType(
  "opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest",
);
export const ExportLogsServiceResponse = root.lookupType(
  "opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse",
);
export const RpcStatus = root.lookupType("google.rpc.Status");
export const RetryInfo = root.lookupType("google.rpc.RetryInfo");
