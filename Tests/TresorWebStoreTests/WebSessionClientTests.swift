import Testing
import TresorWebStore

/// A session's browser in words, from the `User-Agent` headers today's browsers send: each names
/// several engines ("like Gecko", "Safari" in Chrome's), and only the right one is said.
struct WebSessionClientTests {
    @Test(arguments: [
        ("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0", "Firefox on Linux"),
        ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36", "Chrome on Linux"),
        (
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
            "Edge on Windows"
        ),
        (
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
            "Safari on macOS"
        ),
        (
            "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
            "Safari on iPhone"
        ),
        (
            "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.81 Mobile Safari/537.36",
            "Chrome on Android"
        ),
        (
            "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36",
            "Samsung Internet on Android"
        ),
        (
            "Mozilla/5.0 (iPad; CPU OS 17_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1",
            "Chrome on iPad"
        ),
        ("curl/7.88.1", "curl"),
    ])
    func aBrowserInWords(userAgent: String, words: String) {
        #expect(WebSessionClient.browser(fromUserAgent: userAgent) == words)
    }

    @Test func noKnownBrowserIsNoWords() {
        #expect(WebSessionClient.browser(fromUserAgent: "Mozilla/5.0") == nil)
        #expect(WebSessionClient.browser(fromUserAgent: "") == nil)
        #expect(WebSessionClient(address: "192.0.2.7", userAgent: nil) == WebSessionClient(address: "192.0.2.7", browser: nil))
    }
}
