/** The engine runtime: adapters around the core (JetStream source, sinks, checkpoints). */
export {};
export * from "./streams.js";
