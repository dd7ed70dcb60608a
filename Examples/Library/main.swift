import LifeSync
import LifeSyncRuntime   // SystemClock, SystemRandom, NodeThread

let replica = try Replica.create(path: "phone.sqlite", role: .phone,
                                 clock: SystemClock(), random: SystemRandom())
let entry = try replica.add(json: try JSONValue.parse(#"{"category": "note", "data": {"text": "hi"}}"#))
try replica.update(id: entry.id, patch: try JSONValue.parse(#"{"data": {"tags": ["x"]}}"#))
let recent = try replica.entries(matching: EntryQuery(category: "note", limit: 10))
print("\(recent.count) note(s), the newest tagged \(recent[0].data.tags ?? [])")

// Serve it: a node on a thread of its own, on loopback (port 0 picks a free port; listen on
// "0.0.0.0:7002" to be reachable from other machines), dialling a peer. Writes made through
// `replica` meanwhile are noticed and synced. Each log line starts with the node's name.
let node = try NodeThread(path: "phone.sqlite", configuration: NodeConfiguration(peers: ["127.0.0.1:7003"]),
                          listen: "127.0.0.1:0", name: "phone") { print($0) }
print("serving on \(node.listeningAddress!); press Enter to stop")
_ = readLine()   // nil at once when standard input is closed
node.stop()      // closes its sessions cleanly and waits for the node's thread
