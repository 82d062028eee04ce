package dev.kdelay.service.http;

import dev.kdelay.service.config.ServiceConfig;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.Collections;
import java.util.Optional;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.apache.kafka.common.config.ConfigException;

/**
 * The key material of an endpoint that serves HTTPS, read once at start from PKCS12 files: the
 * keystore with the instance's private key and certificate chain, and what peers are trusted with.
 *
 * <p>Instances of one deployment call each other over HTTPS when they serve it, and check each
 * other's certificate: against the truststore if one is configured, else against the instance's own
 * certificate alone, pinned. So instances that share one keystore trust each other with nothing
 * more to configure, and trust nobody else: not even another certificate of the authority that
 * signed theirs, which may be a public one that signs for anybody. Instances with certificates of
 * their own need a truststore (their authority, or their certificates).
 *
 * <p>Every error names the setting and the file, never a password.
 */
public final class HttpsKeys {

  private final SSLContext server;
  private final SSLContext client;

  private HttpsKeys(SSLContext server, SSLContext client) {
    this.server = server;
    this.client = client;
  }

  /**
   * The key material {@code delay.http.tls.*} names, if it names a keystore.
   *
   * @throws ConfigException as {@link #read} does
   */
  public static Optional<HttpsKeys> of(ServiceConfig config) {
    return config
        .httpTlsKeystoreFile()
        .map(
            keystore ->
                read(
                    Path.of(keystore),
                    config.httpTlsKeystorePassword(),
                    config.httpTlsTruststoreFile().map(Path::of),
                    config.httpTlsTruststorePassword()));
  }

  /**
   * Reads the keystore and, if given, the truststore.
   *
   * @param keystore the PKCS12 keystore with one private key entry
   * @param keystorePassword its password (also the key's, as PKCS12 tools write it)
   * @param truststore a PKCS12 file of trusted certificates; empty to trust the keystore's own
   * @param truststorePassword its password
   * @throws ConfigException if a file cannot be read, a password is wrong, or the keystore holds no
   *     private key
   */
  public static HttpsKeys read(
      Path keystore,
      String keystorePassword,
      Optional<Path> truststore,
      String truststorePassword) {
    KeyStore keys = load(keystore, keystorePassword, "the keystore");
    try {
      if (Collections.list(keys.aliases()).stream().noneMatch(alias -> isKey(keys, alias))) {
        throw new ConfigException(
            "the keystore " + keystore + " holds no private key: HTTPS needs one, with its chain");
      }
      KeyManagerFactory keyManagers =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      keyManagers.init(keys, keystorePassword.toCharArray());
      KeyStore trusted =
          truststore.isPresent()
              ? load(truststore.get(), truststorePassword, "the truststore")
              : certificatesOf(keys);
      TrustManagerFactory trustManagers =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      trustManagers.init(trusted);
      SSLContext server = SSLContext.getInstance("TLS");
      server.init(keyManagers.getKeyManagers(), null, null);
      SSLContext client = SSLContext.getInstance("TLS");
      client.init(null, trustManagers.getTrustManagers(), null);
      return new HttpsKeys(server, client);
    } catch (GeneralSecurityException e) {
      throw new ConfigException(
          "cannot use the keystore " + keystore + " for HTTPS: " + e.getClass().getSimpleName());
    }
  }

  /** What the endpoint serves with. */
  SSLContext serverContext() {
    return server;
  }

  /** What this instance calls its peers with: it trusts only the certificates configured. */
  public SSLContext clientContext() {
    return client;
  }

  private static boolean isKey(KeyStore store, String alias) {
    try {
      return store.isKeyEntry(alias);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  private static KeyStore load(Path file, String password, String what) {
    try (InputStream in = Files.newInputStream(file)) {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(in, password.toCharArray());
      return store;
    } catch (NoSuchFileException e) {
      throw new ConfigException(what + " " + file + " does not exist");
    } catch (IOException e) {
      // A wrong password surfaces as an IOException whose cause is an UnrecoverableKeyException;
      // its message names neither password nor key.
      String why =
          e.getCause() instanceof java.security.UnrecoverableKeyException
              ? "the password is wrong"
              : "it is not a readable PKCS12 file (" + e.getClass().getSimpleName() + ")";
      throw new ConfigException("cannot read " + what + " " + file + ": " + why);
    } catch (GeneralSecurityException e) {
      throw new ConfigException(
          "cannot read " + what + " " + file + ": " + e.getClass().getSimpleName());
    }
  }

  /**
   * A store of trusted certificates: the certificate of each private key in {@code keys}, without
   * its issuers, and none of the keystore's other entries.
   */
  private static KeyStore certificatesOf(KeyStore keys) throws GeneralSecurityException {
    KeyStore trusted = KeyStore.getInstance("PKCS12");
    try {
      trusted.load(null, null);
    } catch (IOException e) {
      throw new GeneralSecurityException("cannot create an empty store", e);
    }
    int index = 0;
    for (String alias : Collections.list(keys.aliases())) {
      if (isKey(keys, alias) && keys.getCertificate(alias) != null) {
        trusted.setCertificateEntry("pinned-" + index++, keys.getCertificate(alias));
      }
    }
    return trusted;
  }
}
