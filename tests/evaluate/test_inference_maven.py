"""Which report Maven and javac commands produce."""

import pytest

from sprintflow.evaluate.inference import GENERIC, ReportSpec, infer_report


@pytest.mark.parametrize("command, expected", [
    ("mvn test", ReportSpec("maven")),
    ("mvn -q test", ReportSpec("maven")),
    ("mvn -B -fae verify", ReportSpec("maven")),
    ("./mvnw -B clean package -DskipTests", ReportSpec("maven")),
    ("mvn install -pl core -am", ReportSpec("maven")),
    ("mvn -q compile", ReportSpec("maven")),
    ("mvn test-compile", ReportSpec("maven")),
    ("mvn surefire:test -Dtest=FooTest", ReportSpec("maven")),
    ("mvn -B checkstyle:check", ReportSpec("maven")),
    ("mvn com.github.spotbugs:spotbugs-maven-plugin:4.7.3.6:check", ReportSpec("maven")),
    ("mvn org.apache.maven.plugins:maven-failsafe-plugin:integration-test", ReportSpec("maven")),
    ("cd backend && ./mvnw -q test", ReportSpec("maven")),
    ("javac -d out src/main/java/x/Foo.java", ReportSpec("maven")),
    ("mvn -q test && npx tsc", ReportSpec("maven+tsc")),
    ("mvn dependency:tree", ReportSpec(GENERIC)),
    ("mvn -Dfoo=a:b exec:java", ReportSpec(GENERIC)),
])
def test_maven_commands(tmp_path, command, expected):
    assert infer_report(command, tmp_path) == expected
