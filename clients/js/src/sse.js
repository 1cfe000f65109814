/**
 * A streaming parser for the text/event-stream format (WHATWG HTML, "Server-sent events",
 * section 9.2.6), fed decoded text in chunks of any size.
 *
 * It keeps only the unfinished line and the fields of the event being built, so memory is
 * bounded by one event. Line endings may be "\n", "\r\n" or "\r", and a "\r\n" split across
 * two chunks is handled. Comments (": hb") are reported through onComment so a reader can
 * count heartbeats; an event's id is reported with it (the caller keeps the last one).
 *
 * @module
 */

/**
 * @typedef {object} SseMessage
 * @property {string|undefined} id    the event's `id:` field, if the event carried one
 * @property {string} event           the `event:` field, "message" when absent
 * @property {string} data            the data lines joined with "\n"
 */

export class SseParser {
  /**
   * @param {object} handlers
   * @param {(message: SseMessage) => void} handlers.onMessage  called once per dispatched event
   * @param {(retryMs: number) => void} [handlers.onRetry]      called for a valid `retry:` field
   * @param {(text: string) => void} [handlers.onComment]       called for a comment line
   */
  constructor({ onMessage, onRetry, onComment }) {
    this.onMessage = onMessage;
    this.onRetry = onRetry ?? (() => {});
    this.onComment = onComment ?? (() => {});
    /** @type {string} the unfinished last line */
    this.pending = "";
    this.skipLeadingLf = false;
    this.firstChunk = true;
    this.resetEvent();
  }

  resetEvent() {
    /** @type {string[]} */
    this.dataLines = [];
    this.hasData = false;
    this.eventName = "";
    /** @type {string|undefined} */
    this.eventId = undefined;
  }

  /**
   * Feeds decoded text.
   * @param {string} text
   */
  push(text) {
    if (this.firstChunk && text.length > 0) {
      this.firstChunk = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    let start = 0;
    if (this.skipLeadingLf && text.length > 0) {
      if (text[0] === "\n") start = 1;
      this.skipLeadingLf = false;
    }
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 10 /* \n */ || c === 13 /* \r */) {
        const line = this.pending + text.slice(start, i);
        this.pending = "";
        if (c === 13) {
          if (i + 1 < text.length) {
            if (text.charCodeAt(i + 1) === 10) i++;
          } else {
            this.skipLeadingLf = true;
          }
        }
        start = i + 1;
        this.line(line);
      }
    }
    if (start < text.length) this.pending += text.slice(start);
  }

  /**
   * Ends the stream. Per the standard an event not followed by a blank line is discarded.
   */
  end() {
    this.pending = "";
    this.resetEvent();
  }

  /** @param {string} line */
  line(line) {
    if (line.length === 0) {
      this.dispatch();
      return;
    }
    if (line.charCodeAt(0) === 58 /* : */) {
      this.onComment(line.slice(1).replace(/^ /, ""));
      return;
    }
    const colon = line.indexOf(":");
    let field;
    let value;
    if (colon < 0) {
      field = line;
      value = "";
    } else {
      field = line.slice(0, colon);
      value = line.slice(colon + 1);
      if (value.charCodeAt(0) === 32) value = value.slice(1);
    }
    switch (field) {
      case "data":
        this.dataLines.push(value);
        this.hasData = true;
        break;
      case "event":
        this.eventName = value;
        break;
      case "id":
        if (!value.includes("\0")) this.eventId = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) this.onRetry(Number(value));
        break;
      default:
        break; // unknown fields are ignored
    }
  }

  dispatch() {
    if (this.hasData) {
      this.onMessage({
        id: this.eventId,
        event: this.eventName || "message",
        data: this.dataLines.join("\n"),
      });
    }
    this.resetEvent();
  }
}
