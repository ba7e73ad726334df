export * from "./protocol.js";
export * from "./core/index.js";
