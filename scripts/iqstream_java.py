"""The java a measuring script starts servers with: IQSTREAM_JAVA, else JAVA_HOME's, else the PATH's."""
import os


def java():
    if os.environ.get("IQSTREAM_JAVA"):
        return os.environ["IQSTREAM_JAVA"]
    if os.environ.get("JAVA_HOME"):
        return os.path.join(os.environ["JAVA_HOME"], "bin", "java")
    return "java"
