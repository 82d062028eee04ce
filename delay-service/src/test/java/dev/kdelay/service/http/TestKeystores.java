package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * PKCS12 files made by the JDK's own {@code keytool}, as an operator would make them: a keystore
 * with a self-signed certificate for {@code localhost} and {@code 127.0.0.1}, and a truststore with
 * only a certificate.
 */
final class TestKeystores {

  private TestKeystores() {}

  /** A keystore with one EC key and its certificate, for the name and address given. */
  static Path keystore(Path dir, String name, String password) throws Exception {
    Path file = dir.resolve(name + ".p12");
    keyPair(file, name, "CN=localhost", "SAN=dns:localhost,ip:127.0.0.1", password);
    return file;
  }

  /**
   * A certificate authority's keystore (entry {@code ca}), as {@link #keystore} makes one but
   * marked as an authority.
   */
  static Path authority(Path dir, String name, String password) throws Exception {
    Path file = dir.resolve(name + ".p12");
    keyPair(file, "ca", "CN=" + name, "bc:c", password);
    return file;
  }

  /** Adds an EC key and its self-signed certificate to a PKCS12 file, made if absent. */
  private static void keyPair(Path file, String alias, String dname, String ext, String password)
      throws Exception {
    keytool(
        "-genkeypair",
        "-alias",
        alias,
        "-keyalg",
        "EC",
        "-groupname",
        "secp256r1",
        "-dname",
        dname,
        "-ext",
        ext,
        "-validity",
        "2",
        "-storetype",
        "PKCS12",
        "-keystore",
        file.toString(),
        "-storepass",
        password,
        "-keypass",
        password);
  }

  /**
   * A keystore whose key's certificate, for {@code localhost} and {@code 127.0.0.1}, the authority
   * signed: its chain is the certificate and the authority's, as an operator imports a CA's reply.
   */
  static Path signedBy(Path dir, String name, Path authority, String password) throws Exception {
    Path file = dir.resolve(name + ".p12");
    keyPair(file, name, "CN=localhost", "SAN=dns:localhost,ip:127.0.0.1", password);
    Path request = dir.resolve(name + ".csr");
    keytool(
        "-certreq",
        "-alias",
        name,
        "-keystore",
        file.toString(),
        "-storepass",
        password,
        "-file",
        request.toString());
    Path signed = dir.resolve(name + "-signed.cer");
    keytool(
        "-gencert",
        "-alias",
        "ca",
        "-keystore",
        authority.toString(),
        "-storepass",
        password,
        "-infile",
        request.toString(),
        "-outfile",
        signed.toString(),
        "-ext",
        "SAN=dns:localhost,ip:127.0.0.1",
        "-validity",
        "2",
        "-rfc");
    Path caCertificate = dir.resolve(name + "-ca.cer");
    keytool(
        "-exportcert",
        "-alias",
        "ca",
        "-keystore",
        authority.toString(),
        "-storepass",
        password,
        "-file",
        caCertificate.toString(),
        "-rfc");
    keytool(
        "-importcert",
        "-noprompt",
        "-alias",
        "ca",
        "-file",
        caCertificate.toString(),
        "-keystore",
        file.toString(),
        "-storepass",
        password);
    keytool(
        "-importcert",
        "-alias",
        name,
        "-file",
        signed.toString(),
        "-keystore",
        file.toString(),
        "-storepass",
        password);
    return file;
  }

  /** A truststore holding the certificate of {@code keystore}'s entry {@code alias}, and no key. */
  static Path truststoreOf(
      Path dir, Path keystore, String alias, String keystorePassword, String password)
      throws Exception {
    Path certificate = dir.resolve(alias + ".cer");
    keytool(
        "-exportcert",
        "-alias",
        alias,
        "-keystore",
        keystore.toString(),
        "-storepass",
        keystorePassword,
        "-file",
        certificate.toString());
    Path file = dir.resolve(alias + "-trust.p12");
    keytool(
        "-importcert",
        "-noprompt",
        "-alias",
        alias,
        "-file",
        certificate.toString(),
        "-storetype",
        "PKCS12",
        "-keystore",
        file.toString(),
        "-storepass",
        password);
    return file;
  }

  private static void keytool(String... arguments) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    command.addAll(List.of(arguments));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("keytool finished").isTrue();
    assertThat(process.exitValue()).as(output).isZero();
  }
}
