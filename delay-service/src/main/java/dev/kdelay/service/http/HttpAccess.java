package dev.kdelay.service.http;

import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.service.http.AccessTokens.Role;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.apache.kafka.common.config.ConfigException;

/**
 * Who may do what over HTTP, decided on the request line and headers before the body is read:
 *
 * <ul>
 *   <li>with tokens configured, every route but {@code /health/*}, the console's page and files
 *       ({@code GET /} and {@code GET /console/*}, no data in them) and {@code /metrics} (unless
 *       {@code delay.http.auth.metrics}) needs {@code Authorization: Bearer TOKEN}: 401 without a
 *       valid one, 403 for a {@code read} token on a route that changes state;
 *   <li>a request that changes state (any method but GET and HEAD) may carry no {@code Origin} but
 *       an allowed one (403), and a POST must say {@code Content-Type: application/json}, also
 *       without a body (415). A browser sends a cross-site form, {@code text/plain} or untyped POST
 *       without asking first, never a JSON one, and always names the page's origin; a PUT, PATCH or
 *       DELETE it sends only after a preflight ({@code OPTIONS}), which kdelay never grants. So no
 *       other site's page can make a visitor's browser change a schedule, whatever the network lets
 *       it reach, while {@code curl -X DELETE} needs no header it has no use for;
 *   <li>without tokens, a request must be addressed ({@code Host}) to an address, {@code localhost}
 *       or a name of this instance's, so that a page whose DNS name was pointed at the instance
 *       (DNS rebinding) cannot read the API as its own site's (403);
 *   <li>{@link ApiRequest#FORWARDED_HEADER} is believed only from a caller with a token, when
 *       tokens are configured: anyone else is answered as any caller, from every instance;
 *   <li>a token listed with a tenant acts for that tenant only ({@link #tenant}): the API confines
 *       its answers and changes to the tenant's schedules, dead letters and metrics, and the
 *       console's overview, which shows the whole deployment, answers it 403.
 * </ul>
 */
public final class HttpAccess {

  /** A request's headers, by name, case-insensitive: the first value, or null if absent. */
  @FunctionalInterface
  public interface Headers {
    String first(String name);
  }

  /** The realm named in {@code WWW-Authenticate}. */
  static final String REALM = "kdelay";

  static final String JSON = "application/json";

  /** No tokens and no allowed origins: what a loopback-only endpoint without a tokens file gets. */
  public static final HttpAccess OPEN = new HttpAccess(AccessTokens.NONE, false, Set.of());

  /** A dotted IPv4 address or a bracketed IPv6 one, as a Host header names an address. */
  private static final Pattern IP_LITERAL =
      Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}|\\[[0-9A-Fa-f:.]+(%[^\\]]+)?\\]");

  private final AccessTokens tokens;
  private final boolean metricsNeedToken;
  private final Set<String> allowedOrigins;
  private final Set<String> allowedHosts;
  private final String scheme;

  HttpAccess(AccessTokens tokens, boolean metricsNeedToken, Set<String> allowedOrigins) {
    this(tokens, metricsNeedToken, allowedOrigins, Set.of(), "http");
  }

  /**
   * Access rules.
   *
   * @param tokens the tokens, or {@link AccessTokens#NONE}
   * @param metricsNeedToken whether {@code /metrics} needs a token when tokens are configured
   * @param allowedOrigins origins besides the endpoint's own whose pages may change state
   * @param allowedHosts host names besides {@code localhost} and addresses that a request may be
   *     addressed to when no tokens are configured
   * @param scheme {@code http} or {@code https}: what the endpoint's own origin starts with
   */
  HttpAccess(
      AccessTokens tokens,
      boolean metricsNeedToken,
      Set<String> allowedOrigins,
      Set<String> allowedHosts,
      String scheme) {
    this.tokens = tokens;
    this.metricsNeedToken = metricsNeedToken;
    this.allowedOrigins = Set.copyOf(allowedOrigins);
    this.allowedHosts = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    this.allowedHosts.add("localhost");
    this.allowedHosts.addAll(allowedHosts);
    this.scheme = scheme;
  }

  /**
   * The access rules a configuration sets, checked against the address the endpoint binds.
   *
   * @throws ConfigException if the tokens file cannot be read or parsed, or if the endpoint would
   *     listen beyond loopback without tokens and {@code delay.http.auth.required} is true
   */
  public static HttpAccess from(ServiceConfig config, InetAddress bindAddress) {
    AccessTokens tokens =
        config.httpAuthTokensFile().isBlank()
            ? AccessTokens.NONE
            : AccessTokens.read(Path.of(config.httpAuthTokensFile()));
    for (String tenant : tokens.tenants()) {
      if (config.delay().tenants().named(tenant).isEmpty()) {
        throw new ConfigException(
            ServiceConfig.HTTP_AUTH_TOKENS_FILE_CONFIG,
            config.httpAuthTokensFile(),
            "a token acts for tenant '"
                + tenant
                + "', which is not one of delay.tenants ("
                + (config.delay().tenants().isEmpty() ? "none" : config.delay().tenants())
                + ")");
      }
    }
    if (!tokens.configured() && !bindAddress.isLoopbackAddress() && config.httpAuthRequired()) {
      throw new ConfigException(
          ServiceConfig.HTTP_BIND_ADDRESS_CONFIG
              + "="
              + config.httpBindAddress()
              + " is not a loopback address, and no tokens are configured: anyone who reaches"
              + " the port could schedule and cancel. Set "
              + ServiceConfig.HTTP_AUTH_TOKENS_FILE_CONFIG
              + " (DELAY_HTTP_AUTH_TOKENS_FILE), or set "
              + ServiceConfig.HTTP_AUTH_REQUIRED_CONFIG
              + "=false (DELAY_HTTP_AUTH_REQUIRED) if something in front of kdelay"
              + " authenticates callers.");
    }
    Set<String> hosts = new HashSet<>(config.httpAllowedHosts());
    if (!config.httpAdvertisedHost().isBlank()) {
      hosts.add(config.httpAdvertisedHost());
    }
    // What an instance advertises when no host is configured: peers address it by that name.
    try {
      hosts.add(InetAddress.getLocalHost().getHostName());
    } catch (UnknownHostException e) {
      // No name of its own to advertise, then: see DelayService#advertisedHost.
    }
    return new HttpAccess(
        tokens,
        config.httpAuthMetrics(),
        Set.copyOf(config.httpAllowedOrigins()),
        hosts,
        config.httpTlsKeystoreFile().isPresent() ? "https" : "http");
  }

  /**
   * The address {@code delay.http.bind.address} names.
   *
   * @throws ConfigException if it cannot be resolved
   */
  public static InetAddress bindAddress(ServiceConfig config) {
    try {
      return InetAddress.getByName(config.httpBindAddress());
    } catch (UnknownHostException e) {
      throw new ConfigException(
          ServiceConfig.HTTP_BIND_ADDRESS_CONFIG,
          config.httpBindAddress(),
          "is not an address of this machine: " + e.getMessage());
    }
  }

  /**
   * Why a request is turned away, if it is.
   *
   * @param method the HTTP method
   * @param segments the decoded path segments
   * @param headers the request headers
   * @return the answer to send instead of serving the request; empty to serve it
   */
  Optional<ApiResponse> refusal(String method, List<String> segments, Headers headers) {
    boolean changesState = changesState(method);
    if (!tokens.configured() && !isHealth(method, segments)) {
      Optional<ApiResponse> misaddressed = hostRefusal(headers.first("Host"));
      if (misaddressed.isPresent()) {
        return misaddressed;
      }
    }
    if (tokens.configured() && !isOpen(method, segments)) {
      Optional<Role> role = role(headers);
      if (role.isEmpty()) {
        return Optional.of(
            ApiResponse.error(
                    401, "UNAUTHORIZED", "this route needs an Authorization: Bearer token")
                .withHeader("WWW-Authenticate", "Bearer realm=\"" + REALM + "\""));
      }
      if (changesState && !role.get().mayWrite()) {
        return Optional.of(
            ApiResponse.error(403, "FORBIDDEN", method + " needs a token with the write role"));
      }
      Optional<String> tenant = tenant(headers);
      if (tenant.isPresent() && showsTheWholeDeployment(segments)) {
        return Optional.of(
            ApiResponse.error(
                403,
                "FORBIDDEN",
                "this token acts for tenant "
                    + tenant.get()
                    + ": it sees the tenant's schedules, dead letters and metrics, not /"
                    + String.join("/", segments)));
      }
    }
    if (changesState) {
      return crossSiteRefusal(method, headers);
    }
    return Optional.empty();
  }

  /**
   * Without tokens, nothing but the Host header tells a page of this machine's own from a page of
   * any site whose DNS name the attacker pointed at 127.0.0.1 (DNS rebinding): the browser then
   * treats the instance as that site's and lets its scripts read the answers. So a request must be
   * addressed to an address, to {@code localhost}, or to a name configured as this instance's.
   */
  private Optional<ApiResponse> hostRefusal(String host) {
    if (host == null) {
      return Optional.empty(); // HTTP/1.0; no browser sends a request without Host
    }
    String name = hostName(host);
    if (IP_LITERAL.matcher(name).matches() || allowedHosts.contains(name)) {
      return Optional.empty();
    }
    return Optional.of(
        ApiResponse.error(
            403,
            "HOST_NOT_ALLOWED",
            "requests addressed to '"
                + name
                + "' are refused: without tokens only an address, localhost and the names in "
                + ServiceConfig.HTTP_ALLOWED_HOSTS_CONFIG
                + " are served"));
  }

  /** The host of a Host header, without its port. */
  private static String hostName(String host) {
    String trimmed = host.strip();
    if (trimmed.startsWith("[")) {
      int end = trimmed.indexOf(']');
      return end < 0 ? trimmed : trimmed.substring(0, end + 1);
    }
    int colon = trimmed.lastIndexOf(':');
    return colon < 0 ? trimmed : trimmed.substring(0, colon);
  }

  private Optional<ApiResponse> crossSiteRefusal(String method, Headers headers) {
    String origin = headers.first("Origin");
    if (origin != null && !allowedOrigins.contains(origin) && !isOwn(origin, headers)) {
      return Optional.of(
          ApiResponse.error(
              403,
              "ORIGIN_NOT_ALLOWED",
              "requests from origin '"
                  + origin
                  + "' may not change state; allowed origins are set with "
                  + ServiceConfig.HTTP_ALLOWED_ORIGINS_CONFIG));
    }
    if (method.equals("POST") && !isJson(headers.first("Content-Type"))) {
      return Optional.of(
          ApiResponse.error(
              415,
              "UNSUPPORTED_MEDIA_TYPE",
              method + " needs Content-Type: " + JSON + ", also without a body"));
    }
    return Optional.empty();
  }

  /**
   * Whether a page of the endpoint's own origin sent the request, as the console does: its origin
   * is the scheme and the Host the request is addressed to. Without tokens the Host has passed
   * {@link #hostRefusal}; with tokens a page of another origin has no token to send.
   */
  private boolean isOwn(String origin, Headers headers) {
    String host = headers.first("Host");
    return host != null && origin.equalsIgnoreCase(scheme + "://" + host.strip());
  }

  /** Whether a Content-Type header names JSON, whatever its parameters and case; null: no. */
  static boolean isJson(String contentType) {
    if (contentType == null) {
      return false;
    }
    int parameters = contentType.indexOf(';');
    String type = parameters < 0 ? contentType : contentType.substring(0, parameters);
    return type.strip().toLowerCase(Locale.ROOT).equals(JSON);
  }

  /**
   * Health is always open, so that probes need no secret; metrics unless configured; and the
   * console's page and files, which hold no data: the page asks the API with the user's token.
   */
  private boolean isOpen(String method, List<String> segments) {
    return isHealth(method, segments)
        || (method.equals("GET") && ConsoleRoutes.isFile(segments))
        || (method.equals("GET") && segments.equals(List.of("metrics")) && !metricsNeedToken);
  }

  /**
   * Whether a route shows every tenant's figures at once (the console's overview): not for a
   * tenant's token. ({@code /metrics} answers a tenant's token with its own series.)
   */
  private static boolean showsTheWholeDeployment(List<String> segments) {
    return segments.equals(List.of("overview"));
  }

  private static boolean isHealth(String method, List<String> segments) {
    return method.equals("GET") && !segments.isEmpty() && segments.get(0).equals("health");
  }

  /**
   * Whether to believe a request's {@link ApiRequest#FORWARDED_HEADER}: always without tokens (the
   * endpoint is on loopback, or its operator said that something in front authenticates), else only
   * with a token of the role instances forward with ({@link AccessTokens#forwardsWith}): from
   * anyone else, a read token's holder included, the marker is ignored.
   */
  boolean forwarded(Headers headers) {
    return headers.first(ApiRequest.FORWARDED_HEADER) != null
        && (!tokens.configured() || role(headers).filter(tokens::forwardsWith).isPresent());
  }

  /**
   * The tenant a request's token acts for ({@link AccessTokens#tenantOf}): then the request sees
   * and changes that tenant's schedules and dead letters only. Empty for a token of the whole
   * deployment, and without tokens.
   */
  Optional<String> tenant(Headers headers) {
    return tokens.configured() ? bearer(headers).flatMap(tokens::tenantOf) : Optional.empty();
  }

  private Optional<Role> role(Headers headers) {
    return bearer(headers).flatMap(tokens::roleOf);
  }

  /**
   * Who a request says it is, for a log line: {@code role=ROLE token=NAME} ({@link
   * AccessTokens#nameOf}), with {@code -} for what it does not say or no tokens are configured.
   * Never the token.
   */
  String caller(Headers headers) {
    Optional<String> token = tokens.configured() ? bearer(headers) : Optional.empty();
    String role =
        token.flatMap(tokens::roleOf).map(r -> r.name().toLowerCase(Locale.ROOT)).orElse("-");
    return "role="
        + role
        + " token="
        + token.map(tokens::nameOf).orElse("-")
        + token.flatMap(tokens::tenantOf).map(tenant -> " tenant=" + tenant).orElse("");
  }

  private static Optional<String> bearer(Headers headers) {
    String authorization = headers.first("Authorization");
    if (authorization == null
        || !authorization.regionMatches(true, 0, "Bearer ", 0, "Bearer ".length())) {
      return Optional.empty();
    }
    String token = authorization.substring("Bearer ".length()).strip();
    return token.isEmpty() ? Optional.empty() : Optional.of(token);
  }

  /** Whether a request of this method changes state: every method but GET and HEAD. */
  static boolean changesState(String method) {
    return !method.equals("GET") && !method.equals("HEAD");
  }

  /** The token this instance sends with the requests it forwards, if tokens are configured. */
  public Optional<String> peerToken() {
    return tokens.peerToken();
  }
}
