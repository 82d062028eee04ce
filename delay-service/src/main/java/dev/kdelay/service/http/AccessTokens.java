package dev.kdelay.service.http;

import dev.kdelay.schemas.TenantIds;
import dev.kdelay.service.config.ServiceConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.apache.kafka.common.config.ConfigException;

/**
 * The bearer tokens the HTTP API accepts, read from {@code delay.http.auth.tokens.file}:
 *
 * <pre>
 * # ROLE TOKEN [NAME] [tenant=TENANT], one per line; the token as is, or sha256:&lt;hex&gt; of it
 * read  sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 dashboards
 * write 6f1c9e2ad3f04b1e8a7c5d2b9e0f1a3c orders-team tenant=orders
 * peer  0b7d44f1c2e9a6b3d8f05c1e7a2b4d69
 * </pre>
 *
 * <p>The name, if given, is what the log calls the token ({@link #nameOf}); without one, the first
 * digits of its digest. A token with a tenant acts for that tenant only ({@link #tenantOf}): it
 * sees and changes that tenant's schedules and dead letters, nothing of the deployment's; a token
 * without one acts for the whole deployment. A peer token has no tenant: instances forward with it
 * on any caller's behalf, the tenant named in the forwarded request.
 *
 * <p>Only SHA-256 digests are kept in memory, and a presented token is compared with every digest
 * in constant time ({@link MessageDigest#isEqual}), so that neither the answer's timing nor a heap
 * dump gives a token away. The first {@code peer} token, which must be in plain text, is kept too:
 * the instance sends it when it forwards a read to another instance. A {@code write} token is never
 * sent anywhere.
 */
final class AccessTokens {

  /** What a token allows. */
  enum Role {
    /** GET routes. */
    READ,
    /** Every route. */
    WRITE,
    /**
     * GET routes, and the forwarded marker: what instances send each other when they forward a
     * read. It changes nothing, so a host that receives it (one that joined the group and
     * advertised itself, say) cannot change anything with it either.
     */
    PEER;

    boolean mayWrite() {
      return this == WRITE;
    }
  }

  private static final String SHA256_PREFIX = "sha256:";

  /**
   * The fewest characters a token in plain text may have: a guessable token is no lock. (A token
   * given as its digest cannot be measured; the docs ask for the same.)
   */
  static final int MIN_TOKEN_CHARS = 24;

  /** What a token's name may be: it goes into log lines as it is. */
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

  /** What names a token's tenant on its line. */
  private static final String TENANT_FIELD = "tenant=";

  private record Entry(Role role, byte[] digest, Optional<String> name, Optional<String> tenant) {}

  /** No tokens: nothing is checked. */
  static final AccessTokens NONE = new AccessTokens(List.of(), Optional.empty());

  private final List<Entry> entries;
  private final Optional<String> peerToken;

  private AccessTokens(List<Entry> entries, Optional<String> peerToken) {
    this.entries = entries;
    this.peerToken = peerToken;
  }

  /**
   * Reads a tokens file.
   *
   * @param file the file; its content is never put in a message
   * @throws ConfigException if it cannot be read, has a line that is not {@code ROLE TOKEN}, or no
   *     token at all
   */
  static AccessTokens read(Path file) {
    List<String> lines;
    try {
      lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new ConfigException(
          ServiceConfig.HTTP_AUTH_TOKENS_FILE_CONFIG,
          file.toString(),
          "cannot be read: " + e.getMessage());
    }
    return parse(lines, file.toString());
  }

  /** Parses the lines of a tokens file; {@code source} names it in errors. */
  static AccessTokens parse(List<String> lines, String source) {
    List<Entry> entries = new ArrayList<>();
    String peer = null;
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      List<String> fields = new ArrayList<>(List.of(line.split("\\s+")));
      Optional<String> tenant = Optional.empty();
      if (fields.size() > 2 && fields.get(fields.size() - 1).startsWith(TENANT_FIELD)) {
        tenant = Optional.of(fields.remove(fields.size() - 1).substring(TENANT_FIELD.length()));
      }
      Optional<Role> role = role(fields.get(0));
      if (fields.size() < 2 || fields.size() > 3 || role.isEmpty()) {
        // The line may hold a token: say where it is, never what it says.
        throw new ConfigException(
            ServiceConfig.HTTP_AUTH_TOKENS_FILE_CONFIG,
            source,
            "line "
                + (i + 1)
                + " is not 'ROLE TOKEN [NAME] [tenant=TENANT]' with ROLE one of read, write, peer");
      }
      if (tenant.isPresent() && !TenantIds.NAME.matcher(tenant.get()).matches()) {
        throw new ConfigException(
            ServiceConfig.HTTP_AUTH_TOKENS_FILE_CONFIG,
            source,
            "line " + (i + 1) + " names a tenant that is not 1 to 32 lowercase letters and digits");
      }
      if (tenant.isPresent() && role.get() == Role.PEER) {
        throw new ConfigException(
            ServiceConfig.HTTP_AUTH_TOKENS_FILE_CONFIG,
            source,
            "line "
                + (i + 1)
                + " gives a peer token a tenant; instances forward with it on every tenant's"
                + " behalf, so it has none");
      }
      Optional<String> name = fields.size() == 3 ? Optional.of(fields.get(2)) : Optional.empty();
      if (name.isPresent() && !NAME.matcher(name.get()).matches()) {
        throw new ConfigException(
            ServiceConfig.HTTP_AUTH_TOKENS_FILE_CONFIG,
            source,
            "line "
                + (i + 1)
                + " has a name that is not 1 to 64 letters, digits, '.', '_' or '-' (starting with"
                + " a letter or digit)");
      }
      String token = fields.get(1);
      boolean hashed = token.regionMatches(true, 0, SHA256_PREFIX, 0, SHA256_PREFIX.length());
      if (!hashed && token.length() < MIN_TOKEN_CHARS) {
        throw new ConfigException(
            ServiceConfig.HTTP_AUTH_TOKENS_FILE_CONFIG,
            source,
            "line "
                + (i + 1)
                + " has a token of fewer than "
                + MIN_TOKEN_CHARS
                + " characters; use a long random one, such as the output of openssl rand -hex 32");
      }
      byte[] digest = hashed ? hex(token, source, i + 1) : sha256(token);
      for (Entry earlier : entries) {
        if (name.isPresent() && name.equals(earlier.name())) {
          // Two tokens, one name: the audit log could not tell them apart.
          throw new ConfigException(
              ServiceConfig.HTTP_AUTH_TOKENS_FILE_CONFIG,
              source,
              "line " + (i + 1) + " gives a name another line gives; give each token its own");
        }
        if ((earlier.role() != role.get() || !earlier.tenant().equals(tenant))
            && MessageDigest.isEqual(earlier.digest(), digest)) {
          // One token, two roles or tenants: which a caller has would depend on the lines' order.
          throw new ConfigException(
              ServiceConfig.HTTP_AUTH_TOKENS_FILE_CONFIG,
              source,
              "line "
                  + (i + 1)
                  + " lists a token already listed under another role or tenant; give each its"
                  + " own token");
        }
      }
      entries.add(new Entry(role.get(), digest, name, tenant));
      if (!hashed && role.get() == Role.PEER && peer == null) {
        peer = token;
      }
    }
    if (entries.isEmpty()) {
      throw new ConfigException(
          ServiceConfig.HTTP_AUTH_TOKENS_FILE_CONFIG, source, "holds no token");
    }
    if (peer == null) {
      // Instances forward reads to each other, and must present a token that passes: one that can
      // only read, since the host it goes to is whichever the group's metadata names.
      throw new ConfigException(
          ServiceConfig.HTTP_AUTH_TOKENS_FILE_CONFIG,
          source,
          "needs a peer token in plain text (not sha256:), which the instance sends when it"
              + " forwards a read to another instance; add a line 'peer' and a long random token");
    }
    return new AccessTokens(List.copyOf(entries), Optional.of(peer));
  }

  private static Optional<Role> role(String name) {
    for (Role role : Role.values()) {
      if (role.name().equalsIgnoreCase(name)) {
        return Optional.of(role);
      }
    }
    return Optional.empty();
  }

  private static byte[] hex(String token, String source, int line) {
    String hex = token.substring(SHA256_PREFIX.length());
    try {
      byte[] digest = HexFormat.of().parseHex(hex);
      if (digest.length == 32) {
        return digest;
      }
    } catch (IllegalArgumentException e) {
      // Reported below.
    }
    throw new ConfigException(
        ServiceConfig.HTTP_AUTH_TOKENS_FILE_CONFIG,
        source,
        "line " + line + ": sha256: must be followed by 64 hex digits");
  }

  static byte[] sha256(String token) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-256", e);
    }
  }

  /** Whether any token is configured: then every route but the open ones needs one. */
  boolean configured() {
    return !entries.isEmpty();
  }

  /**
   * The role of a presented token.
   *
   * @param token the token from {@code Authorization: Bearer}
   * @return its role, the strongest if it is listed more than once; empty if it is not listed
   */
  Optional<Role> roleOf(String token) {
    byte[] digest = sha256(token);
    Role found = null;
    // Every entry is compared, whatever matched first: the time taken does not depend on which.
    for (Entry entry : entries) {
      if (MessageDigest.isEqual(entry.digest(), digest)
          && (found == null || entry.role().mayWrite())) {
        found = entry.role();
      }
    }
    return Optional.ofNullable(found);
  }

  /**
   * What a log may say of a presented token: the name its line gives it; else {@code sha256:} and
   * the first 8 hex digits of its SHA-256 digest if it is listed (an operator finds the line with
   * {@code printf %s TOKEN | sha256sum}); {@code unlisted} if not. Never the token.
   */
  String nameOf(String token) {
    byte[] digest = sha256(token);
    boolean listed = false;
    Optional<String> name = Optional.empty();
    // Every entry is compared, as in roleOf.
    for (Entry entry : entries) {
      boolean matches = MessageDigest.isEqual(entry.digest(), digest);
      listed |= matches;
      if (matches && name.isEmpty()) {
        name = entry.name();
      }
    }
    if (!listed) {
      return "unlisted";
    }
    return name.orElse(SHA256_PREFIX + HexFormat.of().formatHex(digest, 0, 4));
  }

  /**
   * The tenant a presented token acts for, if it is listed with one; empty for a token of the whole
   * deployment, or one not listed. A token is listed with one tenant at most ({@link #parse}).
   */
  Optional<String> tenantOf(String token) {
    byte[] digest = sha256(token);
    Optional<String> tenant = Optional.empty();
    // Every entry is compared, as in roleOf.
    for (Entry entry : entries) {
      if (MessageDigest.isEqual(entry.digest(), digest) && entry.tenant().isPresent()) {
        tenant = entry.tenant();
      }
    }
    return tenant;
  }

  /** The tenants the tokens name, each once: every one must be a tenant of the deployment. */
  Set<String> tenants() {
    Set<String> tenants = new TreeSet<>();
    entries.forEach(entry -> entry.tenant().ifPresent(tenants::add));
    return tenants;
  }

  /** The token this instance sends when it forwards a read: the first peer token. */
  Optional<String> peerToken() {
    return peerToken;
  }

  /** Whether a token of this role is one instances forward with: {@code peer}. */
  boolean forwardsWith(Role role) {
    return role == Role.PEER;
  }

  @Override
  public String toString() {
    // Never the tokens, not even their digests.
    return "AccessTokens[" + entries.size() + " tokens]";
  }
}
