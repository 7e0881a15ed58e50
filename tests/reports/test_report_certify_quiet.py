"""certify -q prints only its own lines (issue 33 item 13): recording the Vulkan devices for the
certificate used to let ncnn's C++ device report through to the terminal, whatever the backend."""
import os
import subprocess
import sys


def test_recording_the_vulkan_devices_prints_nothing():
    # a fresh process: ncnn prints its report on the first Vulkan use in a process only
    code = "from pnnx_conformance.report.certificate import vulkan_devices; print(vulkan_devices())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ),
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.startswith("[")
