package dev.kdelay.service.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import dev.kdelay.client.DelayClient;
import dev.kdelay.client.DelayedMessage;
import dev.kdelay.service.DelayService;
import dev.kdelay.service.KafkaClusterExtension;
import dev.kdelay.service.KafkaTestCluster;
import dev.kdelay.service.TargetTopicReader;
import dev.kdelay.service.config.ServiceConfig;
import dev.kdelay.topology.DelayConfig;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.header.Header;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The web console in a real browser (Debian's headless Chromium, driven by Selenium) against a real
 * broker and a real instance with tokens: log in, create a schedule with the form, find it, trigger
 * it and see it fire; find a dead letter and replay it with a corrected target. A screenshot of
 * each page goes to {@code target/console-screenshots/}.
 *
 * <p>Needs {@code /usr/bin/chromium} and {@code /usr/bin/chromedriver} ({@code apt-get install
 * chromium chromium-driver}): skipped without them, failed without them when {@code CI} is set or
 * {@code -Dkdelay.browser.required=true}. Selenium is pointed at both files, so it never looks for,
 * or downloads, a browser of its own.
 */
@Tag("integration")
@ExtendWith(KafkaClusterExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConsoleBrowserIT {

  static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
  static final String INSTALL =
      "apt-get update && apt-get install -y --no-install-recommends chromium chromium-driver";

  private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
  private static final Duration TIMEOUT = Duration.ofSeconds(60);
  private static final Path SCREENSHOTS = Path.of("target", "console-screenshots");

  private final List<AutoCloseable> resources = new ArrayList<>();
  private final String token = "console-" + UUID.randomUUID();

  /** A token of the tenant {@value #TENANT}. */
  private final String tenantToken = "console-tenant-" + UUID.randomUUID();

  private static final String TENANT = "shop";
  private String bootstrapServers;
  private String name;
  private String target;
  private String url;
  private WebDriver browser;
  private WebDriverWait wait;

  @BeforeAll
  void startInstanceAndBrowser(KafkaTestCluster kafka) throws Exception {
    if (!browserInstalled()) {
      return; // the test says why, skipped or failed
    }
    bootstrapServers = kafka.bootstrapServers();
    name = "console-" + UUID.randomUUID().toString().substring(0, 8);
    target = name + "-target";
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrapServers))) {
      admin
          .createTopics(
              List.of(
                  new NewTopic(target, 1, (short) 1),
                  new NewTopic(TENANT + "." + name, 1, (short) 1)))
          .all()
          .get();
    }
    Path dir = Files.createTempDirectory("kdelay-console-tokens");
    resources.add(() -> HttpProbes.deleteRecursively(dir));
    Path tokens =
        Files.writeString(
            dir.resolve("tokens"),
            "write "
                + token
                + "\nwrite "
                + tenantToken
                + " shop-team tenant="
                + TENANT
                + "\npeer peer-"
                + UUID.randomUUID()
                + "\n");
    Map<String, Object> settings = new HashMap<>();
    settings.put(DelayConfig.TENANTS_CONFIG, TENANT);
    settings.put(ServiceConfig.HTTP_AUTH_TOKENS_FILE_CONFIG, tokens.toString());
    settings.put(ServiceConfig.HTTP_ADVERTISED_HOST_CONFIG, "127.0.0.1");
    DelayService service =
        HttpInstances.create(
            bootstrapServers,
            name,
            2,
            "kdelay-it-" + name,
            Files.createTempDirectory("kdelay-console-it"),
            settings,
            resources);
    service.start(Optional.of(START_TIMEOUT));
    url = "http://127.0.0.1:" + service.httpPort().orElseThrow();
    browser = chromium();
    resources.add(browser::quit);
    wait = new WebDriverWait(browser, TIMEOUT, Duration.ofMillis(250));
    Files.createDirectories(SCREENSHOTS);
  }

  private static boolean browserInstalled() {
    return Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER);
  }

  /** Skips, or fails on CI, when the browser is not installed. */
  private static void requireBrowser() {
    if (browserInstalled()) {
      return;
    }
    String missing =
        "the console's browser test needs "
            + CHROMIUM
            + " and "
            + CHROMEDRIVER
            + "; install them with: "
            + INSTALL;
    if (System.getenv("CI") != null || Boolean.getBoolean("kdelay.browser.required")) {
      fail(missing);
    }
    Assumptions.assumeTrue(false, missing);
  }

  private static WebDriver chromium() {
    // Both files named: Selenium Manager is never asked to find or download anything.
    System.setProperty("SE_OFFLINE", "true");
    System.setProperty(ChromeDriverService.CHROME_DRIVER_EXE_PROPERTY, CHROMEDRIVER.toString());
    ChromeDriverService service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(CHROMEDRIVER.toFile())
            .usingAnyFreePort()
            .build();
    ChromeOptions options = new ChromeOptions();
    options.setBinary(new File(CHROMIUM.toString()));
    options.addArguments(
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1100,820",
        "--lang=en-US");
    return new ChromeDriver(service, options);
  }

  @AfterAll
  void stop() throws Exception {
    for (int i = resources.size() - 1; i >= 0; i--) {
      resources.get(i).close();
    }
  }

  @Test
  void shouldCreateFindTriggerAndReplayThroughTheConsole() throws Exception {
    requireBrowser();
    withDiagnostics("failure", this::createFindTriggerAndReplay);
  }

  /**
   * Runs a browser scenario; if it fails, keeps what the page showed and asked for, to tell a page
   * that waits from one that never asked.
   */
  private void withDiagnostics(String screenshot, Scenario scenario) throws Exception {
    try {
      scenario.run();
    } catch (Exception | AssertionError e) {
      try {
        screenshot(screenshot);
        System.err.println("console-requests:\n" + requestsMade());
      } catch (Exception diagnostics) {
        e.addSuppressed(diagnostics);
      }
      throw e;
    }
  }

  @FunctionalInterface
  private interface Scenario {
    void run() throws Exception;
  }

  @Test
  void shouldShowATenantsTokenItsTenantsSchedulesOnly() throws Exception {
    requireBrowser();
    withDiagnostics("tenant-failure", this::showATenantItsOwn);
  }

  private void showATenantItsOwn() throws Exception {
    // given: a schedule of the shared namespace and one of the tenant's, with the same id
    String id = "same-" + UUID.randomUUID().toString().substring(0, 8);
    try (DelayClient client =
        DelayClient.create(
            Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers),
            name + "-requests")) {
      client
          .schedule(
              DelayedMessage.builder(id, target)
                  .after(Duration.ofHours(1))
                  .payload("shared")
                  .build())
          .get(10, TimeUnit.SECONDS);
      client
          .onTopic(name + "-requests." + TENANT)
          .schedule(
              DelayedMessage.builder(id, TENANT + "." + name)
                  .after(Duration.ofHours(1))
                  .payload("the tenant's")
                  .build())
          .get(10, TimeUnit.SECONDS);
    }
    By tenants =
        By.cssSelector("#schedules tr[data-id='" + id + "'][data-tenant='" + TENANT + "']");
    By shared = By.cssSelector("#schedules tr[data-id='" + id + "'][data-tenant='']");

    // when: the operator lists them
    browser.get(url + "/");
    logIn(token);
    browser.get(url + "/#/schedules?idPrefix=" + id);
    // then: both, the tenant's marked with its tenant
    reloadUntilShown(tenants);
    reloadUntilShown(shared);
    assertThat(browser.findElement(By.cssSelector("#schedules thead")).getText())
        .contains("tenant");

    // when: the tenant's token lists them
    logIn(tenantToken);
    browser.get(url + "/#/schedules?idPrefix=" + id);
    // then: the tenant's only
    reloadUntilShown(tenants);
    assertThat(browser.findElements(shared)).isEmpty();
    screenshot("tenant-schedules");

    // when: its page is opened and the schedule cancelled with its button
    browser.findElement(tenants).findElement(By.linkText(id)).click();
    wait.until(ExpectedConditions.textToBe(By.id("schedule-status"), "pending"));
    assertThat(browser.findElement(By.id("schedule-tenant")).getText()).isEqualTo(TENANT);
    assertThat(browser.findElement(By.id("page")).getText()).contains("the tenant's");
    browser.findElement(By.id("action-cancel")).click();
    wait.until(ExpectedConditions.alertIsPresent()).accept();

    // then: the tenant's is cancelled, the shared one of the same id still pending
    reloadUntilShown(By.cssSelector("#schedule-status.status-cancelled"));
    logIn(token);
    browser.get(url + "/#/schedule/" + id);
    reloadUntilShown(By.cssSelector("#schedule-status.status-pending"));
    assertThat(browser.findElement(By.id("page")).getText()).contains("shared");

    // and the tenant's token is refused the whole deployment's overview
    logIn(tenantToken);
    browser.get(url + "/#/overview");
    wait.until(
        ExpectedConditions.textToBePresentInElementLocated(
            By.id("notice"), "acts for tenant " + TENANT));
    browser.findElement(By.id("token-clear")).click();
    // the page asks again without a token, and is refused
    wait.until(
        ExpectedConditions.textToBePresentInElementLocated(By.id("notice"), "needs a token"));
  }

  /** Types a token in and uses it: the page asks the API with it from now on. */
  private void logIn(String bearer) {
    WebElement field = browser.findElement(By.id("token"));
    field.clear();
    field.sendKeys(bearer);
    browser.findElement(By.id("token-save")).click();
    wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("notice"), "Token kept"));
  }

  private void createFindTriggerAndReplay() throws Exception {
    // given: the console, refused without a token, then logged in
    browser.get(url + "/");
    wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("notice"), "token"));
    browser.findElement(By.id("token")).clear();
    browser.findElement(By.id("token")).sendKeys(token);
    browser.findElement(By.id("token-save")).click();
    wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("total-pending")));
    wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("instances")));
    assertThat(browser.findElement(By.id("instances")).getText()).contains("127.0.0.1");
    assertThat(browser.getPageSource()).doesNotContain(token);

    // when: a schedule is created with the form, an hour out
    String id = "console-" + UUID.randomUUID().toString().substring(0, 8);
    browser.findElement(By.id("nav-create")).click();
    wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("create-form")));
    browser.findElement(By.id("id")).sendKeys(id);
    browser.findElement(By.id("targetTopic")).sendKeys(target);
    browser.findElement(By.id("after")).clear();
    browser.findElement(By.id("after")).sendKeys("PT1H");
    browser.findElement(By.id("payload")).sendKeys("{\"order\":42}");
    browser.findElement(By.id("headers")).sendKeys("traceparent: 00-abc-def-01");
    browser.findElement(By.id("create-submit")).click();
    wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("notice"), "Scheduled"));

    // then: the list finds it by its id prefix, once the instance has applied it
    browser.get(url + "/#/schedules?idPrefix=" + id);
    WebElement row = reloadUntilShown(By.cssSelector("#schedules tr[data-id='" + id + "']"));
    assertThat(row.getText()).contains(target);
    browser.get(url + "/#/schedules");
    wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector("#schedules tbody")));
    screenshot("schedules");

    // when: its detail page is opened and it is triggered
    browser.get(url + "/#/schedules?idPrefix=" + id);
    wait.until(ExpectedConditions.elementToBeClickable(By.linkText(id))).click();
    wait.until(ExpectedConditions.textToBe(By.id("schedule-status"), "pending"));
    assertThat(browser.findElement(By.id("page")).getText())
        .contains("traceparent", "00-abc-def-01", "{\"order\":42}");
    screenshot("schedule");
    browser.findElement(By.id("action-trigger")).click();
    wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("notice"), "accepted"));

    // then: it fires, for a read_committed consumer, and the page says so
    try (TargetTopicReader reader = new TargetTopicReader(bootstrapServers, target)) {
      reader.pollUntil(received -> fired(received, id), TIMEOUT);
    }
    reloadUntilShown(By.cssSelector("#schedule-status.status-fired"));

    // given: a request for a topic that does not exist, dead-lettered by intake
    String lost = "lost-" + UUID.randomUUID().toString().substring(0, 8);
    try (DelayClient client =
        DelayClient.create(
            Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers),
            name + "-requests")) {
      client
          .schedule(
              DelayedMessage.builder(lost, name + "-missing")
                  .fireAt(Instant.now())
                  .payload("{\"lost\":true}")
                  .build())
          .get(10, TimeUnit.SECONDS);
    }

    // when: it is found among the dead letters and replayed to the right topic
    browser.get(url + "/#/dead-letters?code=UNKNOWN_TOPIC");
    WebElement letter = reloadUntilShown(By.cssSelector(".dead-letter[data-id='" + lost + "']"));
    assertThat(letter.getText()).contains("UNKNOWN_TOPIC", lost);
    screenshot("dead-letters");
    String key = letter.getAttribute("data-letter");
    WebElement topic = browser.findElement(By.id("replay-topic-" + key));
    topic.clear();
    topic.sendKeys(target);
    new Select(browser.findElement(By.id("replay-kind-" + key))).selectByValue("after");
    browser.findElement(By.id("replay-time-" + key)).sendKeys("PT0S");
    browser.findElement(By.id("replay-" + key)).click();
    wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("notice"), "Replayed"));

    // then: it fires to the corrected target, with its payload
    try (TargetTopicReader reader = new TargetTopicReader(bootstrapServers, target)) {
      List<TargetTopicReader.Received> received =
          reader.pollUntil(records -> fired(records, lost), TIMEOUT);
      assertThat(
              received.stream()
                  .filter(r -> r.record().key().equals(lost))
                  .map(r -> r.record().value()))
          .containsExactly("{\"lost\":true}");
    }

    // when: a recurring schedule is written in the form, its next occurrences previewed live
    String daily = "daily-" + UUID.randomUUID().toString().substring(0, 8);
    browser.get(url + "/#/create");
    wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("create-form")));
    browser.findElement(By.id("id")).sendKeys(daily);
    browser.findElement(By.id("targetTopic")).sendKeys(target);
    new Select(browser.findElement(By.id("timing"))).selectByValue("cron");
    WebElement zone = browser.findElement(By.id("zone"));
    zone.clear();
    zone.sendKeys("Europe/Berlin");
    browser.findElement(By.id("cron")).sendKeys("0 30 2 * * ?");
    wait.until(ExpectedConditions.numberOfElementsToBe(By.cssSelector("#cron-preview li"), 10));
    assertThat(browser.findElement(By.id("cron-preview")).getText()).contains(" 02:30 +0");
    screenshot("create");
    browser.findElement(By.id("create-submit")).click();

    // then: its page shows it, with the same ten occurrences
    reloadUntilShown(By.cssSelector("#schedule-status.status-pending"));
    wait.until(ExpectedConditions.numberOfElementsToBe(By.cssSelector("#cron-next li"), 10));
    assertThat(browser.findElement(By.id("schedule-detail")).getText())
        .contains("0 30 2 * * ?", "Europe/Berlin");
    screenshot("schedule-cron");

    // when: it is paused, resumed, moved to another time and cancelled with the page's buttons
    browser.findElement(By.id("action-pause")).click();
    reloadUntilShown(By.cssSelector("#schedule-status.status-paused"));
    browser.findElement(By.id("action-resume")).click();
    reloadUntilShown(By.cssSelector("#schedule-status.status-pending"));
    new Select(browser.findElement(By.id("reschedule-kind"))).selectByValue("cron");
    browser.findElement(By.id("reschedule-value")).sendKeys("0 45 3 * * ?");
    browser.findElement(By.id("action-reschedule")).click();
    reloadUntilShown(By.xpath("//dl[@id='schedule-detail']//dd[contains(., '0 45 3 * * ?')]"));
    browser.findElement(By.id("action-cancel")).click();
    wait.until(ExpectedConditions.alertIsPresent()).accept();

    // then: each one applied in turn, the last one leaving it cancelled
    reloadUntilShown(By.cssSelector("#schedule-status.status-cancelled"));

    // and the overview shows what happened
    browser.get(url + "/#/overview");
    wait.until(
        ExpectedConditions.textToBePresentInElementLocated(By.id("rejections"), "UNKNOWN_TOPIC"));
    // with the fires of each interval beside the tasks fire-rate limits deferred (none here)
    assertThat(reloadUntilShown(By.cssSelector("#charts .legend-deferred")).getText())
        .startsWith("deferred 0");
    assertThat(browser.findElement(By.cssSelector("#charts .legend-fired")).getText())
        .startsWith("fired ");
    screenshot("overview");
    // and reads on a phone's width too
    browser.manage().window().setSize(new Dimension(400, 860));
    browser.get(url + "/#/schedules");
    wait.until(ExpectedConditions.visibilityOfElementLocated(By.cssSelector("#schedules tbody")));
    screenshot("schedules-phone");
  }

  /**
   * Waits for an element, reloading the page each time it has loaded its data without it: what the
   * page shows was read once, and the instance applies requests a moment after they are written.
   */
  private WebElement reloadUntilShown(By locator) {
    return wait.until(
        driver -> {
          if (!"ready".equals(driver.findElement(By.id("page")).getAttribute("data-state"))) {
            return null;
          }
          List<WebElement> found = driver.findElements(locator);
          if (found.isEmpty()) {
            driver.navigate().refresh();
            return null;
          }
          return found.get(0);
        });
  }

  /** The requests the page made that have an answer: path, start+duration, status. */
  private Object requestsMade() {
    return ((ChromeDriver) browser)
        .executeScript(
            "return performance.getEntriesByType('resource').map(e =>"
                + " e.name.replace(/^https?:\\/\\/[^/]+/, '') + ' ' + Math.round(e.startTime)"
                + " + '+' + Math.round(e.duration) + 'ms ' + e.responseStatus).join('\\n')");
  }

  private static boolean fired(List<TargetTopicReader.Received> received, String id) {
    return received.stream()
        .anyMatch(
            r -> {
              Header header = r.record().headers().lastHeader("delay-id");
              return header != null
                  && new String(header.value(), StandardCharsets.UTF_8).equals(id);
            });
  }

  private void screenshot(String page) throws Exception {
    byte[] png = ((ChromeDriver) browser).getScreenshotAs(OutputType.BYTES);
    Files.write(SCREENSHOTS.resolve(page + ".png"), png);
  }
}
