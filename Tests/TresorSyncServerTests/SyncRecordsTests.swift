import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TresorSyncProtocol
import TresorTestSupport
import TresorWebStore

@testable import TresorSyncServer

/// Pushing and pulling records through the routes, on a real PostgreSQL.
@Suite("Sync records", .enabled(if: TestPostgres.shouldRun))
struct SyncRecordsTests {
    @Test func aRetriedPushGetsTheSameAnswerAndStoresNothingTwice() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        try await instance.account("ada")
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            let enrolled = try await device.join(client)
            #expect(enrolled.state == .trusted && enrolled.createdCircle)
            let uploads = [device.upload("one"), device.upload("two")]
            let first = try await device.push(client, uploads)
            #expect(first.status == .ok, "\(first.text)")
            let again = try await device.push(client, uploads)
            #expect(again.status == .ok)
            #expect(try again.decode(SyncPushResponse.self) == first.decode(SyncPushResponse.self))
            #expect(try first.decode(SyncPushResponse.self).records.map(\.counter) == [1, 2])
            // A retry of the first with the next one added: the first keeps its counter.
            let more = try await device.push(client, [uploads[1], device.upload("three")])
            #expect(try more.decode(SyncPushResponse.self).records.map(\.counter) == [2, 3])
            let page = try await device.pull(client).decode(SyncPage.self)
            #expect(page.records.map(\.upload.body) == ["one", "two", "three"].map { Data($0.utf8) })
            #expect(page.cursor == 3 && !page.more)

            // The same sequence with other content is refused, and stores nothing.
            var forged = uploads[0]
            forged.body = Data("other".utf8)
            let refused = try await device.push(client, [forged])
            #expect(refused.status == .conflict && refused.code == .conflict)
            // A sequence that skips one is refused too.
            let skipped = SyncUpload(recordID: UUID().uuidString, deviceID: device.id, deviceSequence: 9, baseCounter: 0, body: Data("x".utf8))
            #expect(try await device.push(client, [skipped]).code == .conflict)
            #expect(try await device.pull(client).decode(SyncPage.self).records.count == 3)
        }
    }

    /// Two instances on one database; instance 1's push takes its counter, then is held open
    /// before it commits; instance 2's push comes next. Were counters handed out without the
    /// circle's lock (a sequence), instance 2 would commit counter 2 first, a reader would
    /// advance its cursor past 2, and never see counter 1 when it commits late.
    @Test func aReaderNeverSkipsARecordCommittedLate() async throws {
        let url = try await TestPostgres.freshDatabase()
        let entered = Gate(), release = Gate()
        let first = try await SyncInstance.open(
            url: url,
            beforeCommit: {
                entered.open()
                await release.wait()
            })
        let second = try await SyncInstance.open(url: url)
        let account = try await first.account("ada")
        let deviceX = TestDevice(account: "ada"), deviceY = TestDevice(account: "ada")
        _ = try await first.relay.store.enroll(deviceX.enrollment(), account: account.id)
        _ = try await first.relay.store.enroll(deviceY.enrollment(), account: account.id)
        let late = SyncUpload(recordID: UUID().uuidString, deviceID: deviceX.id, deviceSequence: 1, baseCounter: 0, body: Data("late".utf8))
        let early = SyncUpload(recordID: UUID().uuidString, deviceID: deviceY.id, deviceSequence: 1, baseCounter: 0, body: Data("early".utf8))

        let held = Task { try await first.relay.store.push([late], account: account.id, device: deviceX.id) }
        await entered.wait()
        let next = Task { try await second.relay.store.push([early], account: account.id, device: deviceY.id) }
        // The second push waits for the first's lock on the circle.
        let database = TestPostgres.databaseName(of: url)
        var waiting = false
        for _ in 0..<200 where !waiting {
            let blocked = try await TestPostgres.texts(
                "SELECT count(*)::text FROM pg_stat_activity WHERE datname = '\(database)' AND wait_event_type = 'Lock'",
                database: database)
            waiting = blocked != ["0"]
            if !waiting { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(waiting, "the second push should wait for the first's lock")

        // A reader in between sees nothing yet, and keeps its cursor.
        let between = try await second.relay.store.page(account: account.id, after: 0, limit: 100)
        #expect(between.records.isEmpty && between.cursor == 0)

        release.open()
        let lateRecords = try await held.value.records, earlyRecords = try await next.value.records
        #expect(lateRecords.map(\.counter) == [1] && earlyRecords.map(\.counter) == [2], "counters in commit order")
        let after = try await second.relay.store.page(account: account.id, after: between.cursor, limit: 100)
        #expect(after.records.map(\.upload.body) == [Data("late".utf8), Data("early".utf8)], "the reader misses nothing")
        await first.storage.close()
        await second.storage.close()
    }

    @Test func malformedAndOversizedPushesAndPagesAreRefusedAndChangeNothing() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        try await instance.account("ada")
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            try await device.join(client)
            let stored = try await device.push(client, [device.upload("kept")])
            #expect(stored.status == .ok)

            // Not JSON, wrong shape, no uploads.
            let garbage = try await client.execute(
                uri: "/v1/sync/records", method: .post, headers: device.bearer, body: ByteBuffer(string: "{not json"))
            #expect(garbage.status == .badRequest && garbage.code == .invalid)
            let shape = try await client.execute(
                uri: "/v1/sync/records", method: .post, headers: device.bearer, body: ByteBuffer(string: #"{"uploads":[{"recordID":1}]}"#))
            #expect(shape.status == .badRequest && shape.code == .invalid)
            #expect(try await device.push(client, []).code == .invalid)
            // A body over 1 MiB: 413, in a batch with a good upload that is not stored either.
            var big = device.upload("")
            big.body = Data(repeating: 7, count: SyncLimits.bodyBytes + 1)
            var good = device.upload("good")
            good.deviceSequence = big.deviceSequence
            big.deviceSequence += 1
            let oversized = try await device.push(client, [good, big])
            #expect(oversized.status == .contentTooLarge && oversized.code == .tooLarge, "\(oversized.text)")
            // Too many uploads.
            let many = (0..<(SyncLimits.uploadsPerPush + 1)).map { index in
                SyncUpload(recordID: UUID().uuidString, deviceID: device.id, deviceSequence: UInt64(index + 2), baseCounter: 0, body: Data([1]))
            }
            #expect(try await device.push(client, many).code == .tooLarge)
            // A request over the push limit is cut off while read.
            let huge = ByteBuffer(repeating: UInt8(ascii: " "), count: SyncLimits.pushRequestBytes + 1)
            let cut = try await client.execute(uri: "/v1/sync/records", method: .post, headers: device.bearer, body: huge)
            #expect(cut.status == .contentTooLarge)
            // Another device's id, a bad record id, a base counter past the latest.
            var other = good
            other.deviceID = TestDevice.unknownID()
            #expect(try await device.push(client, [other]).code == .forbidden)
            var badID = good
            badID.recordID = "not-a-uuid"
            #expect(try await device.push(client, [badID]).code == .invalid)
            var future = good
            future.baseCounter = 99
            #expect(try await device.push(client, [future]).code == .invalid)

            // Pages: a limit over the cap, a malformed cursor.
            #expect(try await device.pull(client, limit: SyncLimits.pageRecords + 1).code == .invalid)
            #expect(try await device.pull(client, limit: 0).code == .invalid)
            let badCursor = try await client.execute(uri: "/v1/sync/records?after=-1", method: .get, headers: device.bearer)
            #expect(badCursor.status == .badRequest && badCursor.code == .invalid)

            let page = try await device.pull(client).decode(SyncPage.self)
            #expect(page.records.map(\.upload.body) == [Data("kept".utf8)], "nothing of the refused pushes was stored")
            // The good upload goes through on its own afterwards: its sequence was not used up.
            #expect(try await device.push(client, [good]).decode(SyncPushResponse.self).records.map(\.counter) == [2])
        }
    }

    @Test func pagesFollowTheCursorUpToTheirLimit() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        try await instance.account("ada")
        try await instance.application.test(.router) { client in
            var device = TestDevice(account: "ada")
            try await device.join(client)
            var uploads: [SyncUpload] = []
            for index in 0..<5 { uploads.append(device.upload("r\(index)")) }
            #expect(try await device.push(client, uploads).status == .ok)
            var cursor: UInt64 = 0, seen: [String] = [], pages = 0
            while true {
                let page = try await device.pull(client, after: cursor, limit: 2).decode(SyncPage.self)
                seen += page.records.map { String(decoding: $0.upload.body, as: UTF8.self) }
                cursor = page.cursor
                pages += 1
                if !page.more { break }
            }
            #expect(seen == ["r0", "r1", "r2", "r3", "r4"] && pages == 3 && cursor == 5)
        }
    }

    @Test func oneAccountCannotReadOrWriteAnothersRecords() async throws {
        let instance = try await SyncInstance.open(url: try await TestPostgres.freshDatabase())
        try await instance.account("ada")
        try await instance.account("bob")
        try await instance.application.test(.router) { client in
            var ada = TestDevice(account: "ada"), bob = TestDevice(account: "bob")
            try await ada.join(client)
            try await bob.join(client)
            #expect(try await ada.push(client, [ada.upload("ada's secret record")]).status == .ok)
            // Bob's pull sees none of Ada's records, whatever the cursor.
            let page = try await bob.pull(client).decode(SyncPage.self)
            #expect(page.records.isEmpty && page.cursor == 0)
            // Bob cannot push as Ada's device; his own push gets his own counter 1.
            var posing = ada.upload("forged")
            posing.deviceSequence = 1
            #expect(try await bob.push(client, [posing]).code == .forbidden)
            #expect(try await bob.push(client, [bob.upload("bob's")]).decode(SyncPushResponse.self).records.map(\.counter) == [1])
            #expect(try await ada.pull(client).decode(SyncPage.self).records.map(\.upload.body) == [Data("ada's secret record".utf8)])
            // Nor read Ada's device list, devices or join requests: his own only.
            let list = SyncDeviceListUpdate(expectedVersion: 0, version: 1, blob: Data("ada's list".utf8))
            #expect(try await client.send(.put, "/v1/sync/device-list", list, headers: ada.bearer).status == .noContent)
            #expect(try await client.execute(uri: "/v1/sync/device-list", method: .get, headers: bob.bearer).decode(SyncDeviceList.self).version == 0)
            let devices = try await client.execute(uri: "/v1/sync/devices", method: .get, headers: bob.bearer).decode([SyncDevice].self)
            #expect(devices.map(\.deviceID) == [bob.id])
            // Nor remove Ada's device.
            #expect(try await client.execute(uri: "/v1/sync/devices/\(ada.id)", method: .delete, headers: bob.bearer).code == .notFound)
            // Without a session, nothing.
            let anonymous = try await client.execute(uri: "/v1/sync/records", method: .get)
            #expect(anonymous.status == .unauthorized && anonymous.code == .unauthorized)
        }
    }
}
