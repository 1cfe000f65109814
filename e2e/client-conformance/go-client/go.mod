module iqstream.io/e2e/client-conformance/go-client

go 1.21

require github.com/durable-streams/durable-streams/packages/client-go v0.0.0

// the Go client as vendored at the protocol repository's pinned commit (third_party/durable-streams/README.md)
replace github.com/durable-streams/durable-streams/packages/client-go => ../../../third_party/durable-streams/packages/client-go
