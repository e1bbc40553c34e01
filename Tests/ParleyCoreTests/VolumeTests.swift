import Foundation
import ParleyApps
import ParleyCore
import ParleyTestKit
import Testing

/// The volume (issue 28): the model, its store and the built-in phrases and buttons.
@Suite struct VolumeTests {
    // MARK: The model

    @Test func stepsClampAtBothEnds() {
        #expect(Volume(level: 10).applying(.up) == Volume(level: 10))
        #expect(Volume(level: 0).applying(.down) == Volume(level: 0))
        #expect(Volume(level: 14).level == 10)
        #expect(Volume(level: -3).level == 0)
        #expect(Volume(level: 4).applying(.up).level == 5)
        #expect(Volume(level: 4).applying(.down).level == 3)
    }

    @Test func muteKeepsTheLevelForUnmute() {
        let muted = Volume(level: 7).applying(.mute)
        #expect(muted.muted && muted.level == 7 && muted.audibleLevel == 0)
        #expect(muted.applying(.unmute) == Volume(level: 7))
        // Louder unmutes and steps up; quieter stays muted and lowers the kept level.
        #expect(muted.applying(.up) == Volume(level: 8))
        #expect(muted.applying(.down) == Volume(level: 6, muted: true))
        #expect(muted.applying(.set(3)) == Volume(level: 3))
    }

    @Test func theAnswerIsOneWord() {
        #expect(Volume(level: 7).word == "seven")
        #expect(Volume(level: 0).word == "zero")
        #expect(Volume(level: 10).word == "ten")
        #expect(Volume(level: 7, muted: true).word == "muted")
    }

    @Test func anAlarmIsNeverBelowTheFloor() {
        #expect(Volume(level: 2).alarmLevel(floor: 4) == 4)
        #expect(Volume(level: 8).alarmLevel(floor: 4) == 8)
        #expect(Volume(level: 8, muted: true).alarmLevel(floor: 4) == 4)
        #expect(Volume(level: 0).alarmLevel(floor: 1) == 1)
    }

    @Test func softwareGainIsFiveDecibelsAStep() {
        #expect(Volume.gain(level: 10) == 1)
        #expect(Volume.gain(level: 0) == 0)
        for level in 1..<10 {
            let ratio = Volume.gain(level: level + 1) / Volume.gain(level: level)
            #expect(abs(20 * log10(ratio) - 5) < 1e-9)
        }
    }

    @Test func changesParseFromTheCommandLineSpelling() {
        #expect(VolumeChange(argument: "up") == .up)
        #expect(VolumeChange(argument: "DOWN") == .down)
        #expect(VolumeChange(argument: "mute") == .mute)
        #expect(VolumeChange(argument: "unmute") == .unmute)
        #expect(VolumeChange(argument: "0") == .set(0))
        #expect(VolumeChange(argument: "10") == .set(10))
        #expect(VolumeChange(argument: "11") == nil)
        #expect(VolumeChange(argument: "-1") == nil)
        #expect(VolumeChange(argument: "loud") == nil)
        for change in [VolumeChange.up, .down, .mute, .unmute, .set(4)] {
            #expect(VolumeChange(argument: change.argument) == change)
        }
    }

    // MARK: The store

    @Test func theSettingIsKeptInTheStoreAndReadAgain() async throws {
        let store = InMemoryAppDataStore()
        let first = VolumeSetting(store: store)
        #expect(await first.current() == Volume.initial)
        await first.change(.set(3))
        await first.change(.mute)
        // A new setting over the same store (a restart) reads it back.
        let second = VolumeSetting(store: store)
        #expect(await second.current() == Volume(level: 3, muted: true))
        #expect(try await store.keys(app: VolumeSetting.owner, prefix: "") == [VolumeSetting.key])
    }

    @Test func anUnreadableStoredValueFallsBackToTheInitialLevelAndSaysWhy() async throws {
        let store = InMemoryAppDataStore()
        try await store.setValue(Data("not json".utf8), app: VolumeSetting.owner, key: VolumeSetting.key)
        let setting = VolumeSetting(store: store)
        #expect(await setting.current() == Volume.initial)
        #expect(await setting.lastError?.contains("stored volume unreadable") == true)
    }

    // MARK: Voice and buttons

    func harness() throws -> EngineHarness {
        try EngineHarness(apps: BundledApps.all, primaryApp: "Coffee Maker")
    }

    @Test func louderAndQuieterAnswerWithTheNewLevel() async throws {
        let h = try harness()
        #expect(await h.say("louder") == ["seven"])
        #expect(await h.say("Louder!") == ["eight"])
        #expect(await h.say("turn it down") == ["seven"])
        #expect(await h.say("quieter") == ["six"])
        #expect(await h.engine.volume() == Volume(level: 6))
        // Kept in the store the engine was given.
        #expect(await VolumeSetting(store: h.appData).current() == Volume(level: 6))
    }

    @Test func volumeNumberSetsTheLevel() async throws {
        let h = try harness()
        #expect(await h.say("volume three") == ["three"])
        #expect(await h.say("set the volume to ten") == ["ten"])
        #expect(await h.say("volume zero") == ["zero"])
        #expect(await h.engine.volume() == Volume(level: 0))
    }

    @Test func muteIsSilentAndUnmuteSaysTheLevel() async throws {
        let h = try harness()
        #expect(await h.say("mute").isEmpty)
        #expect(await h.engine.volume().muted)
        #expect(await h.say("what's the volume") == ["muted"])
        #expect(await h.say("unmute") == ["six"])
        #expect(await h.say("what is the volume") == ["six"])
    }

    @Test func theVolumeWordIsNotWhatRepeatRepeats() async throws {
        let h = try harness()
        let first = await h.say("how much time is left on the timer")
        #expect(await h.say("louder") == ["seven"])
        #expect(await h.say("repeat") == first)
    }

    @Test func volumeButtonsTickAtTheNewLevel() async throws {
        let h = try harness()
        #expect(await h.press(.volumeUp).isEmpty)
        #expect(await h.sink.sounds == ["volume"])
        await h.press(.volumeDown)
        await h.press(.volumeDown)
        #expect(await h.engine.volume() == Volume(level: 5))
    }

    @Test func volumeButtonsLeaveAnOpenQuestionOpen() async throws {
        let h = try harness()
        #expect(await h.say("start a timer") == ["For how long?"])
        await h.press(.volumeUp)
        #expect(await h.engine.isConversationOpen)
        #expect(await h.say("ten minutes") == ["Ten minutes, starting now."])
        #expect(await h.engine.volume() == Volume(level: 7))
    }

    /// Records the alarm bracket around a timer's chime and words.
    actor RecordingVolume: VolumeControl {
        var calls: [String] = []
        var volume = Volume.initial
        func current() async -> Volume { volume }
        func change(_ change: VolumeChange) async -> Volume {
            calls.append("change \(change)")
            volume = volume.applying(change)
            return volume
        }
        func alarmStarts() async { calls.append("alarm starts") }
        func alarmQueued() async { calls.append("alarm queued") }
    }

    @Test func aTimerAlarmIsBracketedForTheFloor() async throws {
        let h = try harness()
        let volume = RecordingVolume()
        await h.engine.setVolumeControl(volume)
        #expect(await h.say("start a one minute timer") == ["One minute, starting now."])
        #expect(await h.wait(60) == ["The one minute timer is done."])
        #expect(await volume.calls == ["alarm starts", "alarm queued"])
        #expect(await h.sink.sounds == ["chime"])
        #expect(await h.say("louder") == ["seven"])
        #expect(await volume.calls.last == "change up")
    }
}

extension VolumeTests {
    @Test func louderWhileAQuestionIsOpenLeavesItOpen() async throws {
        let h = try harness()
        #expect(await h.say("start a timer") == ["For how long?"])
        #expect(await h.say("louder") == ["seven"])
        #expect(await h.engine.isConversationOpen)
        #expect(await h.say("volume four") == ["four"])
        #expect(await h.say("ten minutes") == ["Ten minutes, starting now."])
        #expect(await h.engine.volume() == Volume(level: 4))
    }

    @Test func theVolumeIsInEveryFollowUpGrammar() {
        for expectation in [FollowUpQuestion.Expectation.yesNo, .number, .duration, .text, .confirmation(voiceAllowed: false)] {
            let model = FollowUpGrammar.model(for: FollowUpQuestion(prompt: "?", expectation: expectation))
            let resolver = Resolver(model: model)
            #expect(resolver.resolve("quieter")?.target == .builtin(.volumeDown))
            #expect(resolver.resolve("volume nine")?.values[PhraseCompiler.volumeBinding] == "9")
        }
    }
}

extension VolumeTests {
    @Test func aStoredLevelOutOfRangeIsClamped() async throws {
        let store = InMemoryAppDataStore()
        try await store.setValue(Data(#"{"level":42}"#.utf8), app: VolumeSetting.owner, key: VolumeSetting.key)
        let setting = VolumeSetting(store: store)
        #expect(await setting.current() == Volume(level: 10))
        #expect(await setting.current().word == "ten")
        try await store.setValue(Data(#"{"level":-5,"muted":true}"#.utf8), app: VolumeSetting.owner, key: VolumeSetting.key)
        #expect(await VolumeSetting(store: store).current() == Volume(level: 0, muted: true))
    }

    /// An app-data store whose writes fail (a full or read-only disk).
    actor FailingWrites: AppDataStore {
        struct DiskFull: Error {}
        func value(app: String, key: String) async throws -> Data? { nil }
        func setValue(_ value: Data, app: String, key: String) async throws { throw DiskFull() }
        func removeValue(app: String, key: String) async throws {}
        func keys(app: String, prefix: String) async throws -> [String] { [] }
    }

    @Test func aFailedWriteStillChangesTheLevelAndSaysItWasNotSaved() async {
        let setting = VolumeSetting(store: FailingWrites())
        #expect(await setting.change(.up) == Volume(level: 7))
        #expect(await setting.current() == Volume(level: 7))
        #expect(await setting.lastError?.hasPrefix("volume not saved") == true)
    }
}
