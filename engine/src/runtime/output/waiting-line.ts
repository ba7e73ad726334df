/**
 * WaitingLine: messages produced but not yet sent, in the order they must go, with their count and
 * bytes (docs/decisions/0035-backpressure.md, "The window"). A queue with a moving head, compacted
 * as it drains, so taking from the front costs no copy per message.
 *
 * Pure: counters and an array.
 */
import type { WindowCount } from "./publish-window.js";

export class WaitingLine<T> {
  private items: T[] = [];
  private head = 0;
  private bytes = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T, bytes: number): void {
    this.items.push(item);
    this.bytes += bytes;
  }

  /** The first item, undefined when none. */
  peek(): T | undefined {
    return this.head < this.items.length ? this.items[this.head] : undefined;
  }

  /** The item `i` places behind the first (0: the first), undefined past the end. */
  at(i: number): T | undefined {
    return this.head + i < this.items.length ? this.items[this.head + i] : undefined;
  }

  /** Removes the first item, whose bytes are `bytes`. */
  shift(bytes: number): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head] as T;
    this.items[this.head] = undefined as T;
    this.head++;
    this.bytes -= bytes;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  count(): WindowCount {
    return { messages: this.length, bytes: this.bytes };
  }
}
