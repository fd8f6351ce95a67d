// The warm JVM of a Java job (issue 24; docs/languages.md, "Java: one warm JVM per job").
//
// Started once per job by the exec supervisor as an isolated test child (its own PID
// namespace, the program uid, no capabilities, the sandbox's seccomp filter and cgroup), with
// the job's classes as a jar on descriptor 4, a control pipe on 5 and a result pipe on 6. For
// each test the supervisor refills descriptors 0, 1 and 2 (memory files) and writes one byte
// on the control pipe; the harness runs the program's main class in a class loader of its
// own (fresh static state), with System.in, System.out and System.err new on those
// descriptors, waits for every non-daemon thread the test started (as the JVM waits before it
// exits), flushes System.out, and writes back the exit status the program would have had and
// whether anything of the test is still running (then the supervisor replaces the JVM).
// System.exit ends the JVM itself: the supervisor sees that status and starts a new one.

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.HashSet;
import java.util.Set;

public final class RlvrHarness {
    private static final int STATUS_UNCAUGHT = 1;

    public static void main(String[] arguments) throws Exception {
        String mainClass = arguments[0];
        URL jar = new URL("file:" + arguments[1]);
        InputStream control = new FileInputStream("/proc/self/fd/5");
        OutputStream results = new FileOutputStream("/proc/self/fd/6");
        warmUp();
        Set<Thread> own = new HashSet<>(Thread.getAllStackTraces().keySet());
        results.write('R');
        results.flush();
        while (control.read() >= 0) {
            int status = runOnce(mainClass, jar);
            boolean leftover = false;
            for (Thread thread : Thread.getAllStackTraces().keySet()) {
                if (!own.contains(thread) && thread.isAlive()) {
                    leftover = true;
                }
            }
            byte[] reply = {
                (byte) status, (byte) (status >> 8), (byte) (status >> 16), (byte) (status >> 24),
                (byte) (leftover ? 1 : 0)
            };
            results.write(reply);
            results.flush();
        }
    }

    /** Loads what most programs use, once, so a test does not pay for it. */
    private static void warmUp() {
        try {
            new java.util.Scanner("1 2").nextInt();
            new java.util.StringTokenizer("a b").nextToken();
            new java.io.BufferedReader(new java.io.StringReader("x")).readLine();
            new java.io.PrintWriter(OutputStream.nullOutputStream()).printf("%d%n", 1).flush();
            java.math.BigInteger.valueOf(3).pow(5).toString();
            String.format("%.3f", 1.5);
            java.util.Arrays.sort(new int[] {3, 1, 2});
            new java.util.TreeMap<Integer, Integer>().put(1, 1);
            new java.util.HashMap<Integer, Integer>().put(1, 1);
            new java.util.ArrayDeque<Integer>().add(1);
            new java.util.PriorityQueue<Integer>().add(1);
        } catch (Exception ignored) {
        }
    }

    /** One test: the program's main class, run as `java MainClass` would run it. */
    private static int runOnce(String mainClass, URL jar) throws Exception {
        // The streams the JDK gives a fresh JVM: a 128-byte buffer, flushed at line ends.
        System.setIn(new BufferedInputStream(new FileInputStream(FileDescriptor.in)));
        PrintStream out = new PrintStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 128), true);
        PrintStream err = new PrintStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.err), 128), true);
        System.setOut(out);
        System.setErr(err);
        URLClassLoader loader = new URLClassLoader(new URL[] {jar}, ClassLoader.getPlatformClassLoader());
        ThreadGroup group = new ThreadGroup("test");
        int[] status = {0};
        Thread main = new Thread(group, () -> {
            try {
                Class<?> program = Class.forName(mainClass, true, loader);
                Method entry = program.getMethod("main", String[].class);
                if (!Modifier.isStatic(entry.getModifiers())) {
                    throw new NoSuchMethodException(mainClass + ".main is not static");
                }
                entry.setAccessible(true);
                entry.invoke(null, (Object) new String[0]);
            } catch (InvocationTargetException thrown) {
                status[0] = STATUS_UNCAUGHT;
                report(thrown.getCause());
            } catch (Throwable failed) {
                status[0] = STATUS_UNCAUGHT;
                System.err.println("Error: Could not find or load main class " + mainClass);
                System.err.println("Caused by: " + failed);
            }
        }, "main", 64L << 20);
        Thread.setDefaultUncaughtExceptionHandler((thread, thrown) -> {
            System.err.print("Exception in thread \"" + thread.getName() + "\" ");
            thrown.printStackTrace(System.err);
        });
        main.start();
        main.join();
        // The JVM exits when its last non-daemon thread ends: wait for the test's.
        boolean waited;
        do {
            waited = false;
            for (Thread thread : Thread.getAllStackTraces().keySet()) {
                if (thread.getThreadGroup() != null && isWithin(thread.getThreadGroup(), group)
                        && !thread.isDaemon() && thread.isAlive() && thread != Thread.currentThread()) {
                    thread.join();
                    waited = true;
                }
            }
        } while (waited);
        System.out.flush();
        System.err.flush();
        loader.close();
        return status[0];
    }

    private static void report(Throwable thrown) {
        System.err.print("Exception in thread \"main\" ");
        thrown.printStackTrace(System.err);
    }

    private static boolean isWithin(ThreadGroup candidate, ThreadGroup ancestor) {
        for (ThreadGroup group = candidate; group != null; group = group.getParent()) {
            if (group == ancestor) {
                return true;
            }
        }
        return false;
    }
}
