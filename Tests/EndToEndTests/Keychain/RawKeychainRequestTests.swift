import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// Malformed keychain requests, sent raw by a registered application (Python, registered for
/// the test): unknown attributes, wrong types, bad ids — clear errors, nothing touched.
@Suite(.blocksItsThread, .serialized) struct RawKeychainRequestTests {
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")))
    func malformedItemRequestsGetClearErrors() throws {
        let harness = try Harness.initialized(passcode: "e2e-raw-passcode")
        let realPython = try FileManager.default.destinationOfSymbolicLink(atPath: Harness.python.path)
        let executable = Harness.python.deletingLastPathComponent().appendingPathComponent(realPython).path
        #expect(
            try harness.tresor(
                ["app", "register", "--id", "TEAMP.python", "--team", "TEAMP", "--exe", executable, "--passcode-stdin"],
                input: "e2e-raw-passcode\n"
            ).succeeded)

        func send(_ path: String, _ bodies: [String]) throws -> [(Int, APIError?)] {
            try harness.pythonRequests(path, bodies).map { answer in
                (answer.status, try? APICoding.decoder.decode(ErrorResponse.self, from: Data(answer.body.utf8)).error)
            }
        }

        let good = try send("/v1/items/add", [#"{"itemClass":"genp","attributes":{"service":"py","account":"a"},"secret":"c2VjcmV0"}"#])
        #expect(good.first?.0 == 200)

        let answers = try send(
            "/v1/items/add",
            [
                #"{"itemClass":"genp","attributes":{"service":"py","acount":"typo"},"secret":"eA=="}"#,
                #"{"itemClass":"genp","attributes":{"service":"py","port":"eighty"},"secret":"eA=="}"#,
                #"{"itemClass":"genp","attributes":{"service":"py","server":"x"},"secret":"eA=="}"#,
                #"{"itemClass":"nope","attributes":{},"secret":"eA=="}"#,
                #"{"itemClass":"genp","attributes":{"service":"py"},"secret":"not base64!"}"#,
                #"{"itemClass":"genp","attributes":{"service":"py","account":"a"},"secret":"eA=="}"#,
                #"{"itemClass":"genp","attributes":{"service":"py","creationDate":5},"secret":"eA=="}"#,
                #"{"itemClass":"genp","attributes":{"service":"py","accessGroup":"OTHER.group"},"secret":"eA=="}"#,
            ])
        let expected: [(Int, APIError.Code, String)] = [
            (400, .param, "unknown attribute \"acount\""),
            (400, .param, "attributes.port"),
            (400, .param, "server does not apply"),
            (400, .param, "malformed request body"),
            (400, .param, "malformed request body"),
            (409, .duplicateItem, "same identifying attributes"),
            (400, .param, "set by the keychain"),
            (403, .missingEntitlement, "OTHER.group"),
        ]
        #expect(answers.count == expected.count)
        for ((status, error), (wantedStatus, wantedCode, fragment)) in zip(answers, expected) {
            #expect(status == wantedStatus, "\(fragment)")
            #expect(error?.code == wantedCode, "\(fragment): \(error?.message ?? "")")
            #expect(error?.message.contains(fragment) == true, "\(error?.message ?? "") should mention \(fragment)")
        }
        let searches = try send(
            "/v1/items/search",
            [
                #"{"query":{"itemClass":"genp","attributes":{"service":"nothing-like-this"},"limit":"all","returnData":false,"returnAttributes":true}}"#,
                #"{"query":{"itemClass":"genp","attributes":{"service":"py","account":"a"},"limit":"one","returnData":true,"returnAttributes":false}}"#,
                #"{"keychain":"Nope","query":{"itemClass":"genp","attributes":{},"limit":"one","returnData":false,"returnAttributes":true}}"#,
            ])
        #expect(searches.map(\.0) == [404, 200, 404])
        #expect(searches[0].1?.code == .itemNotFound)
        #expect(searches[2].1?.code == .noSuchKeychain)
        #expect(harness.daemonIsRunning)
        try harness.expectNoSecretLeaked()
    }
}
