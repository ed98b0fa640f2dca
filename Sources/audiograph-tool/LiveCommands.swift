// The PulseAudio subcommands (play, devices, meter, record), listed apart so the live I/O module can add them.
import ArgumentParser

/// Subcommands that need a PulseAudio server.
let liveCommands: [ParsableCommand.Type] = [PlayCommand.self, DevicesCommand.self, MeterCommand.self, RecordCommand.self]
