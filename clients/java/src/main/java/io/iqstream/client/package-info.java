/**
 * A publisher library for JVM backends that stream AG-UI runs into IQ-Stream.
 *
 * <p>{@link io.iqstream.client.IqStreamClient} is the entry point; {@link
 * io.iqstream.client.RunPublisher} streams one run over one chunked HTTP request, one event at a
 * time as the model produces it, and continues the same run over a new request if the connection
 * breaks; {@link io.iqstream.client.AgUiEvents} builds the common AG-UI events.
 */
package io.iqstream.client;
