/**
 * The Node publisher now lives in `@iqstream/client/publisher` (usable by any Node backend with an
 * AG-UI agent); re-exported here for the runner and for existing imports.
 *
 * @module
 */
export { RunPublisher, publishEvents } from "@iqstream/client/publisher";
