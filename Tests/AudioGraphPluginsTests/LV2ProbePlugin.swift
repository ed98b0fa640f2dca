// A tiny LV2 plugin compiled with cc into a temporary bundle: it maps URIs, reads the options it is given and reports them.
import Foundation
import XCTest

/// A test plugin bundle built on the fly (C source below, compiled with `cc -shared`).
///
/// `urn:audiograph:test:probe` requires urid:map, urid:unmap, options:options and
/// bufsz:boundedBlockLength, has a required atom input and atom output, and does not declare
/// lv2:hardRTCapable. At instantiate it maps URIs and reads every option; each run writes to its
/// audio output, frame k of the run holding `report[k % 8]`:
/// 0 maxBlockLength, 1 minBlockLength, 2 nominalBlockLength, 3 sampleRate (the option),
/// 4 1 if unmap(map(u)) == u for a new URI and map is stable, 5 1 if the atom input is an
/// empty sequence of the host's atom:Sequence URID, 6 the atom output's room in bytes,
/// 7 the frame count of this run.
/// `urn:audiograph:test:needs-log` (same binary) also requires log:log, which the host lacks.
/// `urn:audiograph:test:worker` (same binary) also requires worker:schedule and has the worker
/// interface: its first run schedules the 4-byte int 21, `work` responds with 42, and each run
/// writes `worker[k % 4]`: 0 the response received (0 before), 1 1 if `work` ran on another
/// thread than `run`, 2 1 once end_run has been called, 3 the status schedule_work returned.
struct LV2ProbePlugin {
    static let uri = "urn:audiograph:test:probe"
    static let logURI = "urn:audiograph:test:needs-log"
    static let workerURI = "urn:audiograph:test:worker"
    static let source = #"""
    #include <stdlib.h>
    #include <string.h>
    #include <lv2/core/lv2.h>
    #include <lv2/urid/urid.h>
    #include <lv2/options/options.h>
    #include <lv2/atom/atom.h>
    #include <lv2/buf-size/buf-size.h>
    #include <lv2/parameters/parameters.h>
    #include <lv2/worker/worker.h>
    #include <pthread.h>

    typedef struct {
        const float* in; float* out; const LV2_Atom_Sequence* events; LV2_Atom* notify;
        float report[8]; LV2_URID sequence;
        LV2_Worker_Schedule* schedule; int scheduled; float worker[4]; pthread_t runThread;
    } Probe;

    static LV2_Handle instantiate(const LV2_Descriptor* d, double rate, const char* path, const LV2_Feature* const* features) {
        LV2_URID_Map* map = NULL; LV2_URID_Unmap* unmap = NULL; const LV2_Options_Option* options = NULL;
        for (int i = 0; features && features[i]; ++i) {
            if (!strcmp(features[i]->URI, LV2_URID__map)) map = features[i]->data;
            if (!strcmp(features[i]->URI, LV2_URID__unmap)) unmap = features[i]->data;
            if (!strcmp(features[i]->URI, LV2_OPTIONS__options)) options = features[i]->data;
        }
        if (!map || !unmap || !options) return NULL;
        Probe* p = calloc(1, sizeof(Probe));
        for (int i = 0; features && features[i]; ++i)
            if (!strcmp(features[i]->URI, LV2_WORKER__schedule)) p->schedule = features[i]->data;
        if (!strcmp(d->URI, "urn:audiograph:test:worker") && !p->schedule) { free(p); return NULL; }
        LV2_URID maxB = map->map(map->handle, LV2_BUF_SIZE__maxBlockLength);
        LV2_URID minB = map->map(map->handle, LV2_BUF_SIZE__minBlockLength);
        LV2_URID nomB = map->map(map->handle, LV2_BUF_SIZE__nominalBlockLength);
        LV2_URID sr = map->map(map->handle, LV2_PARAMETERS__sampleRate);
        LV2_URID aInt = map->map(map->handle, LV2_ATOM__Int), aFloat = map->map(map->handle, LV2_ATOM__Float);
        for (const LV2_Options_Option* o = options; o->key; ++o) {
            float v = o->type == aInt ? (float)*(const int32_t*)o->value : o->type == aFloat ? *(const float*)o->value : -1;
            if (o->key == maxB) p->report[0] = v;
            if (o->key == minB) p->report[1] = v;
            if (o->key == nomB) p->report[2] = v;
            if (o->key == sr) p->report[3] = v;
        }
        LV2_URID mine = map->map(map->handle, "urn:audiograph:test:probe#private");
        const char* back = unmap->unmap(unmap->handle, mine);
        p->report[4] = mine != 0 && back && !strcmp(back, "urn:audiograph:test:probe#private")
            && map->map(map->handle, "urn:audiograph:test:probe#private") == mine && mine != maxB;
        p->sequence = map->map(map->handle, LV2_ATOM__Sequence);
        return p;
    }
    static void connect(LV2_Handle h, uint32_t port, void* data) {
        Probe* p = h;
        if (port == 0) p->in = data; else if (port == 1) p->out = data;
        else if (port == 2) p->events = data; else if (port == 3) p->notify = data;
    }
    static void run(LV2_Handle h, uint32_t n) {
        Probe* p = h;
        p->report[5] = p->events && p->events->atom.type == p->sequence
            && p->events->atom.size == sizeof(LV2_Atom_Sequence_Body);
        p->report[6] = p->notify ? (float)p->notify->size : -1;
        p->report[7] = (float)n;
        if (p->notify) { p->notify->type = 0; p->notify->size = 0; }
        if (p->schedule) {
            p->runThread = pthread_self();
            if (!p->scheduled) {
                int32_t v = 21;
                p->worker[3] = (float)p->schedule->schedule_work(p->schedule->handle, sizeof v, &v);
                p->scheduled = 1;
            }
            for (uint32_t k = 0; k < n; ++k) p->out[k] = p->worker[k % 4];
            return;
        }
        for (uint32_t k = 0; k < n; ++k) p->out[k] = p->report[k % 8];
    }
    static LV2_Worker_Status work(LV2_Handle h, LV2_Worker_Respond_Function respond, LV2_Worker_Respond_Handle rh,
                                  uint32_t size, const void* data) {
        Probe* p = h;
        int32_t v = size == 4 ? *(const int32_t*)data * 2 : -1;
        p->worker[1] = !pthread_equal(pthread_self(), p->runThread);
        return respond(rh, sizeof v, &v);
    }
    static LV2_Worker_Status work_response(LV2_Handle h, uint32_t size, const void* data) {
        Probe* p = h;
        if (size == 4) p->worker[0] = (float)*(const int32_t*)data;
        return LV2_WORKER_SUCCESS;
    }
    static LV2_Worker_Status end_run(LV2_Handle h) { ((Probe*)h)->worker[2] = 1; return LV2_WORKER_SUCCESS; }
    static const LV2_Worker_Interface workerInterface = { work, work_response, end_run };
    static const void* extension(const char* uri) { return !strcmp(uri, LV2_WORKER__interface) ? &workerInterface : NULL; }
    static void cleanup(LV2_Handle h) { free(h); }
    static const LV2_Descriptor probe = { "urn:audiograph:test:probe", instantiate, connect, NULL, run, NULL, cleanup, NULL };
    static const LV2_Descriptor needsLog = { "urn:audiograph:test:needs-log", instantiate, connect, NULL, run, NULL, cleanup, NULL };
    static const LV2_Descriptor worker = { "urn:audiograph:test:worker", instantiate, connect, NULL, run, NULL, cleanup, extension };
    LV2_SYMBOL_EXPORT const LV2_Descriptor* lv2_descriptor(uint32_t i) { return i == 0 ? &probe : i == 1 ? &needsLog : i == 2 ? &worker : NULL; }
    """#

    static func ttl(_ uri: String, extra: String) -> String {
        """
        <\(uri)> a lv2:Plugin ; doap:name "Probe" ;
            lv2:requiredFeature urid:map, urid:unmap, opts:options, bufsz:boundedBlockLength \(extra) ;
            lv2:port [ a lv2:InputPort, lv2:AudioPort ; lv2:index 0 ; lv2:symbol "in" ; lv2:name "In" ] ,
                     [ a lv2:OutputPort, lv2:AudioPort ; lv2:index 1 ; lv2:symbol "out" ; lv2:name "Out" ] ,
                     [ a lv2:InputPort, atom:AtomPort ; atom:bufferType atom:Sequence ; atom:supports <http://lv2plug.in/ns/ext/midi#MidiEvent> ;
                       lv2:index 2 ; lv2:symbol "events" ; lv2:name "Events" ] ,
                     [ a lv2:OutputPort, atom:AtomPort ; atom:bufferType atom:Sequence ; lv2:index 3 ; lv2:symbol "notify" ; lv2:name "Notify" ] .
        """
    }

    /// Compiles the plugin into a new temporary directory; skips the test when no C compiler runs.
    static func build() throws -> LV2ProbePlugin {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("lv2probe-\(UUID().uuidString)")
        let bundle = dir.appendingPathComponent("lv2/probe.lv2")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        // The source stays outside the LV2 path (lilv takes every entry there for a bundle).
        try source.write(to: dir.appendingPathComponent("probe.c"), atomically: true, encoding: .utf8)
        let cc = Process()
        cc.executableURL = URL(fileURLWithPath: "/usr/bin/cc")
        cc.arguments = ["-shared", "-fPIC", "-O1", "-pthread", "-o", bundle.appendingPathComponent("probe.so").path,
                        dir.appendingPathComponent("probe.c").path]
        try cc.run()
        cc.waitUntilExit()
        XCTAssertEqual(cc.terminationStatus, 0, "cc failed to build the probe plugin")
        let prefixes = """
        @prefix lv2: <http://lv2plug.in/ns/lv2core#> .
        @prefix doap: <http://usefulinc.com/ns/doap#> .
        @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
        @prefix urid: <http://lv2plug.in/ns/ext/urid#> .
        @prefix opts: <http://lv2plug.in/ns/ext/options#> .
        @prefix bufsz: <http://lv2plug.in/ns/ext/buf-size#> .
        @prefix atom: <http://lv2plug.in/ns/ext/atom#> .

        """
        try (prefixes + """
        <\(uri)> a lv2:Plugin ; lv2:binary <probe.so> ; rdfs:seeAlso <probe.ttl> .
        <\(logURI)> a lv2:Plugin ; lv2:binary <probe.so> ; rdfs:seeAlso <probe.ttl> .
        <\(workerURI)> a lv2:Plugin ; lv2:binary <probe.so> ; rdfs:seeAlso <probe.ttl> .
        """).write(to: bundle.appendingPathComponent("manifest.ttl"), atomically: true, encoding: .utf8)
        try (prefixes + ttl(uri, extra: "") + "\n"
             + ttl(logURI, extra: ", <http://lv2plug.in/ns/ext/log#log>") + "\n"
             + ttl(workerURI, extra: ", <http://lv2plug.in/ns/ext/worker#schedule>"))
            .write(to: bundle.appendingPathComponent("probe.ttl"), atomically: true, encoding: .utf8)
        return LV2ProbePlugin(root: dir)
    }

    /// The temporary directory holding the source and the LV2 path.
    let root: URL
    /// The directory to use as an LV2 path.
    var path: URL { root.appendingPathComponent("lv2") }

    func remove() { try? FileManager.default.removeItem(at: root) }
}
