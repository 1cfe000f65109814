module github.com/durable-streams/durable-streams/packages/client-go

go 1.21
