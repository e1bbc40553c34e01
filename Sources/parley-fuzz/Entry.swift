import Foundation

// Built two ways (scripts/fuzz.sh):
//  - with -DPARLEY_LIBFUZZER and -sanitize=fuzzer,address: libFuzzer's own main
//    drives `LLVMFuzzerTestOneInput`, and PARLEY_FUZZ_TARGET picks the target;
//  - normally (swift build): `parley-fuzz TARGET FILE|FOLDER...` replays inputs
//    once each, so the corpora and every crash ever found stay runnable
//    without the fuzzer runtime (the test suite replays them too).
#if PARLEY_LIBFUZZER
    /// Before the first input: picks the target and builds what it reads
    /// against (the bundled apps' resolver), outside every input's time limit.
    @_cdecl("LLVMFuzzerInitialize")
    public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
        FuzzTarget.selected.prepare()
        return 0
    }

    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzOne(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
        FuzzTarget.selected.run(Data(bytes: bytes, count: count))
        return 0
    }
#else
    @main
    struct Replay {
        static func main() {
            let arguments = Array(CommandLine.arguments.dropFirst())
            guard let name = arguments.first, let target = FuzzTarget(rawValue: name), arguments.count > 1 else {
                let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
                FileHandle.standardError.write(Data("usage: parley-fuzz \(names) FILE|FOLDER...\n".utf8))
                exit(2)
            }
            var replayed = 0
            for path in arguments.dropFirst() {
                for file in inputs(at: path) {
                    guard let data = FileManager.default.contents(atPath: file) else {
                        FileHandle.standardError.write(Data("parley-fuzz: cannot read \(file)\n".utf8))
                        exit(1)
                    }
                    target.run(data)
                    replayed += 1
                }
            }
            print("\(name): \(replayed) inputs replayed")
        }

        /// A file, or the files of a folder (sorted, hidden ones skipped).
        static func inputs(at path: String) -> [String] {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue else { return [path] }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            return names.filter { !$0.hasPrefix(".") }.sorted().map { "\(path)/\($0)" }
        }
    }
#endif
