package dev.kdelay.service.http;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One route of the admin API: a path pattern and, for each method it serves, the answer and where
 * that answer comes from ({@link Reach}). The one declaration both answers a request and tells
 * {@link HttpEndpoint} which thread to answer it on.
 *
 * <pre>{@code
 * Route.of("schedules", Route.ID)
 *     .get(Reach.PEERS, this::view)
 *     .delete(Reach.LOCAL, this::cancel)
 * }</pre>
 *
 * @param pattern the path's segments; {@link #ID} matches any one segment, handed to the answer
 * @param byMethod the handler of each method, in the order declared (the 405's {@code Allow})
 */
record Route(List<String> pattern, Map<String, Handler> byMethod) {

  /** A pattern segment that matches any segment: an id, a partition, an offset, a file name. */
  static final String ID = "{id}";

  /** Where the answer to a route comes from, which decides the thread it is answered on. */
  enum Reach {
    /** This instance's memory only: answered at once, so a busy instance still answers probes. */
    MEMORY,
    /** This instance alone (its stores, a write to the request topic): the local lane. */
    LOCAL,
    /**
     * Whichever instance owns the partition: the peer lane, unless the request was forwarded here
     * already, which is answered from this instance's stores on the local lane.
     */
    PEERS
  }

  /** Answers a request whose path matched a route, given the path's variable segments. */
  @FunctionalInterface
  interface Answer {
    ApiResponse answer(ApiRequest request, List<String> variables);
  }

  /** What a route does for one method, and where that answer comes from. */
  record Handler(Reach reach, Answer answer) {}

  /** A route a path matched, and the path's variable segments. */
  record Match(Route route, List<String> variables) {

    /** The method's handler; empty if the route has none for it (405). */
    Optional<Handler> handler(String method) {
      return Optional.ofNullable(route.byMethod().get(method));
    }
  }

  /** A route that serves no method yet. */
  static Route of(String... pattern) {
    return new Route(List.of(pattern), Map.of());
  }

  Route get(Reach reach, Answer answer) {
    return with("GET", reach, answer);
  }

  Route post(Reach reach, Answer answer) {
    return with("POST", reach, answer);
  }

  Route delete(Reach reach, Answer answer) {
    return with("DELETE", reach, answer);
  }

  private Route with(String method, Reach reach, Answer answer) {
    Map<String, Handler> methods = new LinkedHashMap<>(byMethod);
    methods.put(method, new Handler(reach, answer));
    return new Route(pattern, Collections.unmodifiableMap(methods));
  }

  /** The match if the path's segments fit the pattern. */
  Optional<Match> match(List<String> segments) {
    if (segments.size() != pattern.size()) {
      return Optional.empty();
    }
    List<String> variables = new ArrayList<>();
    for (int i = 0; i < pattern.size(); i++) {
      if (pattern.get(i).equals(ID)) {
        variables.add(segments.get(i));
      } else if (!pattern.get(i).equals(segments.get(i))) {
        return Optional.empty();
      }
    }
    return Optional.of(new Match(this, List.copyOf(variables)));
  }
}
