package io.iqstream.server.http;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * Fuzzes the step-down ({@link ChunkedBodyReader}) against Netty's own HTTP codec as the reference model
 * ({@link StepDownModel}): requests the fuzzer shapes — chunked bodies in plain form and in every other form the
 * codec must decide on (extensions, leading zeros, upper-case hex, bare LF, bad delimiters, trailers), GETs,
 * Content-Length bodies, raw bytes, damage anywhere — cut into reads anywhere, decode to the same trace with the
 * step-down as without it, and leak no buffer. Regression inputs: {@code ChunkedBodyReaderFuzzTestInputs/}.
 */
class ChunkedBodyReaderFuzzTest {
    @FuzzTest(maxDuration = "30s")
    void decodesAsTheCodecDoes(FuzzedDataProvider data) {
        StepDownModel.check(data);
    }
}
