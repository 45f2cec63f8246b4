"""The control channel: line-JSON encoding and a real TCP round trip on localhost."""
from __future__ import annotations

import math
import threading

import pytest

from workloads.coordinator_channel import ControlClient, control_address
from workloads.host.control_server import ControlServer
from workloads.wire.control import LineBuffer, ProtocolError, decode, encode, parse_address


def test_round_trip_keeps_floats_exact():
    message = {"type": "released", "role": "loser", "bytes_moved": 1008000, "redistribution_s": 0.1 + 0.2}
    line = encode(message)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert decode(line) == message


@pytest.mark.parametrize("bad", [{"type": "reboot"}, {"no": "type"}])
def test_unknown_messages_are_refused(bad):
    with pytest.raises(ProtocolError):
        encode(bad)


def test_nan_is_refused_rather_than_sent_as_invalid_json():
    with pytest.raises(ValueError):
        encode({"type": "done", "x": math.nan})


@pytest.mark.parametrize("line", [b"not json\n", b"[1, 2]\n", b'{"type": "nope"}\n', b"\xff\n"])
def test_decode_rejects_garbage(line):
    with pytest.raises(ProtocolError):
        decode(line)


def test_line_buffer_reassembles_split_and_joined_chunks():
    wire = encode({"type": "preempt"}) + encode({"type": "partition", "hosts": ["ws1", "ws2"]})
    buffer = LineBuffer()
    got = []
    for i in range(0, len(wire), 7):
        got.extend(buffer.feed(wire[i:i + 7]))
    assert got == [{"type": "preempt"}, {"type": "partition", "hosts": ["ws1", "ws2"]}]


def test_parse_address():
    assert parse_address("172.28.1.1:5000") == ("172.28.1.1", 5000)
    for bad in ("nohost", ":5000", "host:port"):
        with pytest.raises(ValueError):
            parse_address(bad)


def test_control_address_prefers_the_command_line(monkeypatch):
    monkeypatch.setenv("NOWLAB_CONTROL", "10.0.0.1:9")
    assert control_address("10.0.0.2:8") == ("10.0.0.2", 8)
    assert control_address(None) == ("10.0.0.1", 9)
    monkeypatch.delenv("NOWLAB_CONTROL")
    assert control_address(None) is None


def test_preemption_handshake_over_tcp():
    """The job side (ControlClient) and the scheduler side (ControlServer) agree on the sequence."""
    with ControlServer(bind_host="127.0.0.1") as server:
        client = ControlClient(("127.0.0.1", server.port), server.secret)
        client.send({"type": "hello", "job": "j1", "hosts": ["ws1", "ws2"], "iteration": 0, "resumed": False})
        conn = server.connection("j1", timeout_s=5)
        assert conn.hello.message["hosts"] == ["ws1", "ws2"]
        assert client.poll("preempt") is None  # nothing pending: poll must not block
        sent_at = conn.send({"type": "preempt"})

        def job() -> None:
            client.expect("preempt", timeout_s=5)
            client.send({"type": "ack", "iteration": 7})
            hosts = client.expect("partition", timeout_s=5)["hosts"]
            client.send({"type": "released", "role": "loser", "to_hosts": hosts, "bytes_moved": 10})

        worker = threading.Thread(target=job)
        worker.start()
        ack = conn.expect("ack", timeout_s=5)
        assert ack.message["iteration"] == 7 and ack.at >= sent_at
        conn.send({"type": "partition", "hosts": ["ws1"]})
        released = conn.expect("released", timeout_s=5).message
        worker.join(5)
        assert released["to_hosts"] == ["ws1"]
        client.close()
        with pytest.raises(ConnectionError):
            conn.expect("done", timeout_s=5)


def test_unexpected_message_is_an_error():
    with ControlServer(bind_host="127.0.0.1") as server:
        client = ControlClient(("127.0.0.1", server.port), server.secret)
        client.send({"type": "hello", "job": "j2", "hosts": ["ws1"], "iteration": 0, "resumed": False})
        conn = server.connection("j2", timeout_s=5)
        client.send({"type": "error", "what": "boom"})
        with pytest.raises(RuntimeError, match="boom"):
            conn.expect("ack", timeout_s=5)
        client.close()


def test_a_connection_keeps_no_lines_once_they_are_read():
    """A cell keeps its launches, and so their connections, to its end: lines kept there grew a
    2-h soak's runner by ~20 MiB/h. 3,000 lines of 1 KB read through one connection leave
    well under their size behind."""
    import gc
    import tracemalloc

    with ControlServer(bind_host="127.0.0.1") as server:
        client = ControlClient(("127.0.0.1", server.port), server.secret)
        client.send({"type": "hello", "job": "j3", "hosts": ["ws1"], "iteration": 0, "resumed": False})
        conn = server.connection("j3", timeout_s=5)
        tracemalloc.start()
        try:
            gc.collect()
            before = tracemalloc.get_traced_memory()[0]
            for i in range(3000):
                client.send({"type": "ack", "iteration": i, "pad": "x" * 1000})
                conn.expect("ack", timeout_s=5)
            gc.collect()
            kept = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        client.close()
    assert kept < 300_000, f"{kept} bytes kept after 3 MB of lines"
