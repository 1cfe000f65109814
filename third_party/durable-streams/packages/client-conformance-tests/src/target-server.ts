// Added for IQ-Stream (not in the upstream repository): the server the runner points its adapter at.
// With DURABLE_STREAMS_TARGET_URL set (a stream base URL, e.g. http://127.0.0.1:8080/v1/stream), the runner
// uses that server instead of starting the reference server; otherwise the reference server, as upstream.
import { DurableStreamTestServer as ReferenceServer } from "@durable-streams/server"

interface TargetOptions {
  port?: number
  longPollTimeout?: number
}

class ExternalServer {
  readonly url: string
  constructor(url: string) {
    this.url = url.replace(/\/+$/, ``)
  }
  async start(): Promise<string> {
    return this.url
  }
  async stop(): Promise<void> {}
}

export class DurableStreamTestServer {
  private readonly target: ReferenceServer | ExternalServer
  constructor(options: TargetOptions) {
    const external = process.env.DURABLE_STREAMS_TARGET_URL
    this.target = external
      ? new ExternalServer(external)
      : new ReferenceServer(options)
  }
  get url(): string {
    return this.target.url
  }
  async start(): Promise<string> {
    return this.target.start()
  }
  async stop(): Promise<void> {
    await this.target.stop()
  }
}
