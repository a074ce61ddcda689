// The host API's words for traces (openJournal's `traces` option), kept apart so the public declarations name nothing else.

export type OtlpProtocol = 'http/json' | 'http/protobuf';

/** How the host API asks for traces (an option of openJournal); the OTEL_* variables fill what it leaves out. */
export interface TraceOptions {
  /** The OTLP/HTTP traces URL (…/v1/traces). Default: from OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly endpoint?: string;
  /** Default: OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf. */
  readonly protocol?: OtlpProtocol;
  /** Sent with every request (an API key header), over OTEL_EXPORTER_OTLP_HEADERS. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The resource's service.name. Default: OTEL_SERVICE_NAME, else agent-logbook. */
  readonly serviceName?: string;
  /** Prompts and completions on chat spans, masked by the secrets rules. Default: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT. */
  readonly captureContent?: boolean;
}
