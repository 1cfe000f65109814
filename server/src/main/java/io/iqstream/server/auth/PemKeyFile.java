package io.iqstream.server.auth;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.spec.X509EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the one public key of a PEM file ({@code --jwt-public-key}): a SubjectPublicKeyInfo
 * block ({@code -----BEGIN PUBLIC KEY-----}, what {@code openssl pkey -pubout} writes) or an
 * X.509 certificate, whose key is taken. RSA, EC and Ed25519/Ed448 keys are understood. A file
 * with several keys is refused (a JWKS file holds several, selected by {@code kid}); so is one
 * that holds only a private key or a PKCS#1 {@code RSA PUBLIC KEY}, each with the command that
 * converts it.
 *
 * <p>Stateless; any thread. Used once at startup; every problem is an
 * {@link IllegalArgumentException} whose message names the file.
 */
final class PemKeyFile {

    private static final Pattern BLOCK = Pattern.compile(
            "-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]*?)-----END \\1-----");
    private static final String[] KEY_FACTORIES = {"RSA", "EC", "EdDSA"};

    private PemKeyFile() {
    }

    /** Reads the file's public key. */
    static PublicKey read(Path file) {
        String text = readText(file, "public key");
        List<String> labels = new ArrayList<>();
        List<String> bodies = new ArrayList<>();
        Matcher m = BLOCK.matcher(text);
        while (m.find()) {
            String label = m.group(1);
            if (label.equals("PUBLIC KEY") || label.equals("CERTIFICATE")) {
                labels.add(label);
                bodies.add(m.group(2));
            } else if (label.equals("RSA PUBLIC KEY")) {
                throw new IllegalArgumentException("public key file " + file + " holds a PKCS#1 'RSA PUBLIC KEY';"
                        + " convert it to a 'PUBLIC KEY' with: openssl rsa -RSAPublicKey_in -in " + file
                        + " -pubout");
            }
        }
        if (labels.isEmpty()) {
            boolean hasPrivate = text.contains("PRIVATE KEY-----");
            throw new IllegalArgumentException("public key file " + file + (hasPrivate
                    ? " holds a private key, not a public key; extract the public key with: openssl pkey -in "
                            + file + " -pubout"
                    : " has no '-----BEGIN PUBLIC KEY-----' block"));
        }
        if (labels.size() > 1) {
            throw new IllegalArgumentException("public key file " + file + " holds " + labels.size()
                    + " keys; a PEM file may hold one: put several keys in a JWKS file (--jwks), selected by kid");
        }
        byte[] der;
        try {
            der = Base64.getMimeDecoder().decode(bodies.get(0));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("public key file " + file + " has a damaged base64 body: "
                    + e.getMessage(), e);
        }
        return labels.get(0).equals("CERTIFICATE") ? fromCertificate(file, der) : fromSubjectPublicKeyInfo(file, der);
    }

    private static PublicKey fromSubjectPublicKeyInfo(Path file, byte[] der) {
        for (String algorithm : KEY_FACTORIES) {
            try {
                return KeyFactory.getInstance(algorithm).generatePublic(new X509EncodedKeySpec(der));
            } catch (GeneralSecurityException | RuntimeException tryNext) {
                // not a key of this type; the next factory may understand it
            }
        }
        throw new IllegalArgumentException("public key file " + file
                + " holds a PUBLIC KEY that is neither RSA, EC nor Ed25519/Ed448, or is damaged");
    }

    private static PublicKey fromCertificate(Path file, byte[] der) {
        try {
            return CertificateFactory.getInstance("X.509")
                    .generateCertificate(new ByteArrayInputStream(der)).getPublicKey();
        } catch (CertificateException e) {
            throw new IllegalArgumentException("public key file " + file + " holds a certificate that cannot be read: "
                    + e.getMessage(), e);
        }
    }

    /** Reads a small text file, turning I/O problems into messages that name it. */
    static String readText(Path file, String what) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException(what + " file " + file + " does not exist", e);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read " + what + " file " + file + ": " + e, e);
        }
    }
}
