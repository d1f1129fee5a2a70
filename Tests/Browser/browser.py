"""A real headless Chromium driven through chromedriver (Selenium), every request recorded.

Selenium Manager never runs: the driver is Debian's /usr/bin/chromedriver and the browser
/usr/bin/chromium (overridable with CHROMEDRIVER / CHROMIUM). Each Browser has its own profile,
so two of them are two people with their own cookies.
"""

import os
import tempfile
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import ElementNotInteractableException, NoSuchElementException, StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

import modes
from recorder import RecordingProxy

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("TRESOR_BROWSER_ARTIFACTS", REPO / ".build" / "browser-artifacts"))
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
WINDOW = (1280, 860)
WAIT_SECONDS = 20  # generous: PBKDF2 at 600,000 rounds on a shared 2-core machine


# A phone's browser as chromedriver's mobile emulation makes it: a touch screen, a mobile viewport
# (the page's own viewport meta tag applies), and the user agent of Chrome on Android.
PHONE_USER_AGENT = ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
                    "Chrome/156.0.0.0 Mobile Safari/537.36")
DEVICE_PIXEL_RATIO = 2.0


class Browser:
    def __init__(self, base_url: str, proxy: RecordingProxy, name: str, device: tuple[int, int] | None = None):
        """`device`: (width, height) in CSS pixels of an emulated touch device; a desktop window when None."""
        self.base_url = base_url
        self.proxy = proxy
        self.name = name
        self.device = device
        self.profile = tempfile.mkdtemp(prefix=f"chromium-{name}-")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for argument in (
            "--headless=new", f"--window-size={WINDOW[0]},{WINDOW[1]}", f"--user-data-dir={self.profile}",
            "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-extensions", "--password-store=basic", "--lang=en-US",
            # Everything, loopback included, through the recording proxy.
            f"--proxy-server=http://127.0.0.1:{proxy.port}", "--proxy-bypass-list=<-loopback>",
        ):
            options.add_argument(argument)
        if os.geteuid() == 0:
            options.add_argument("--no-sandbox")  # Chromium refuses to run its sandbox as root
        if device:
            options.add_experimental_option("mobileEmulation", {
                "deviceMetrics": {"width": device[0], "height": device[1], "pixelRatio": DEVICE_PIXEL_RATIO, "touch": True, "mobile": True},
                "userAgent": PHONE_USER_AGENT,
            })
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
        self.driver.set_page_load_timeout(30)
        self.console: list[dict] = []

    # Navigation and waiting

    def open(self, path: str = "/"):
        self.driver.get(self.base_url + path)

    def wait(self, condition, message: str, seconds: float = WAIT_SECONDS):
        """Waits until `condition(driver)` is truthy; on timeout fails with `message` and saves a screenshot."""
        try:
            return WebDriverWait(self.driver, seconds, poll_frequency=0.1,
                                 ignored_exceptions=(NoSuchElementException, StaleElementReferenceException)).until(condition)
        except TimeoutException:
            self.screenshot(f"FAILED-{self.name}-{message[:40]}")
            raise AssertionError(f"{self.name}: timed out waiting for {message}") from None

    def find(self, css: str):
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def all(self, css: str):
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def selected(self, css: str) -> bool:
        """Whether the check box `css` is ticked."""
        return self.again_if_rebuilt(lambda: self.find(css).is_selected())

    def visible(self, css: str) -> bool:
        return any(e.is_displayed() for e in self.all(css))

    def wait_visible(self, css: str, seconds: float = WAIT_SECONDS):
        return self.wait(lambda d: next((e for e in self.all(css) if e.is_displayed()), None), f"{css} to show", seconds)

    def wait_hidden(self, css: str, seconds: float = WAIT_SECONDS):
        self.wait(lambda d: not self.visible(css), f"{css} to hide", seconds)

    def again_if_rebuilt(self, action, also=()):
        """Runs `action`, again (three tries in all) when the page rebuilt the element it found
        before it was done with it (a live reload, a reload after a save), or raised one of `also`."""
        for attempt in range(3):
            try:
                return action()
            except (StaleElementReferenceException, *also):
                if attempt == 2:
                    raise

    def click(self, css: str):
        self.again_if_rebuilt(lambda: self.wait_visible(css).click())

    def type(self, css: str, text: str, clear: bool = True):
        def enter():
            # A field the page disabled while it checks the last entry is visible but takes no keys.
            self.wait(lambda d: self.find(css).is_enabled(), f"{css} to take input")
            field = self.wait_visible(css)
            if clear:
                field.clear()
            field.send_keys(text)

        # Disabled again between the check and the keys: not interactable.
        self.again_if_rebuilt(enter, also=(ElementNotInteractableException,))

    def js(self, script: str, *args):
        return self.driver.execute_script(script, *args)

    @property
    def dom(self) -> str:
        """The live DOM, serialised (what `page_source` gives), plus every input's current value."""
        values = self.js("return Array.from(document.querySelectorAll('input,textarea')).map(e => e.value).join('\\n')")
        return self.driver.page_source + "\n" + (values or "")

    # Artifacts

    def screenshot(self, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{modes.screenshot_prefix()}{name}.png"  # server-… in server mode
        self.driver.save_screenshot(str(path))
        return path

    def drain_console(self) -> list[dict]:
        """The browser console since the last call (errors, CSP violations, uncaught exceptions)."""
        try:
            entries = self.driver.get_log("browser")
        except Exception:
            entries = []
        self.console.extend(entries)
        return entries

    def page_errors(self) -> list[str]:
        """Uncaught exceptions and Content-Security-Policy violations: a correct page has none."""
        self.drain_console()
        return [e["message"] for e in self.console
                if "Uncaught" in e["message"] or "Content Security Policy" in e["message"]
                or "Content-Security-Policy" in e["message"]]

    def quit(self):
        try:
            self.driver.quit()
        finally:
            import shutil
            shutil.rmtree(self.profile, ignore_errors=True)
