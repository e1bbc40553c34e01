// parley-app-runner: starts one external app's handler inside the sandbox.
// systemd runs it once per connection to parley-app.socket (Accept=yes), as
// an instance of parley-app@.service, with the connection on standard input;
// see ParleySandbox.SandboxWire for the conversation. Its own messages go to
// standard error (the journal).
import Foundation
import ParleySandbox

#if canImport(Glibc)
import Glibc
#endif

if CommandLine.arguments.count > 1 {
    FileHandle.standardError.write(Data("usage: parley-app-runner (started by systemd's parley-app.socket with a connection on standard input)\n".utf8))
    exit(64)
}
exit(SandboxRunner.serve(connection: 0) { line in
    FileHandle.standardError.write(Data("parley-app-runner: \(line)\n".utf8))
})
