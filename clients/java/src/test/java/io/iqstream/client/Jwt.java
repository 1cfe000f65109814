package io.iqstream.client;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** HS256 JWTs for tests, from the JDK alone. */
final class Jwt {
  private Jwt() {}

  static String hs256(String secret, String claimsJson) {
    Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
    String head = b64.encodeToString("{\"alg\":\"HS256\",\"typ\":\"JWT\"}".getBytes(StandardCharsets.UTF_8));
    String body = b64.encodeToString(claimsJson.getBytes(StandardCharsets.UTF_8));
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
      byte[] sig = mac.doFinal((head + "." + body).getBytes(StandardCharsets.US_ASCII));
      return head + "." + body + "." + b64.encodeToString(sig);
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }
}
