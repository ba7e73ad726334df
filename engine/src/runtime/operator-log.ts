/** What an operator and its host write to the log (pino's shape; docs/operations.md, "Logs"). */
export interface OperatorLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}
