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
// what the test left behind (issue 32, "Fresh-process semantics" in docs/languages.md):
//
// - put back before every test: the default locales and time zone (the latter unset until a
//   test uses it, as in a fresh JVM), the counters and random generators of the JDK a test
//   advances (thread numbers and names, `new Random()` seeds, `Math.random`,
//   `ThreadLocalRandom`, `Collections.shuffle`), HotSpot's random seed from which each thread's
//   identity hash codes are seeded (found in libjvm's memory at start); the standard streams are
//   new for every test (closing one ends it for this test only, as in a fresh JVM, and leaves
//   the descriptor open);
// - flag LEFTOVER (the supervisor replaces the JVM): a thread still running;
// - flag TAINTED (replaced too): a changed system property, a security manager, a standard
//   descriptor closed through FileDescriptor itself;
// - flag RUN_AGAIN_LAST: a shutdown hook, which a fresh JVM runs at its exit: the supervisor
//   runs the test again in a new JVM with control byte 'l', after which the harness ends the
//   JVM with the test's status as a fresh one would (hooks run, their output is the test's).
//
// System.exit ends the JVM itself: the supervisor sees that status and starts a new one.

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

public final class RlvrHarness {
    private static final int STATUS_UNCAUGHT = 1;
    /** Reply flags (supervisor/warm.rs, `reply_flags`). */
    private static final int LEFTOVER = 1;
    private static final int TAINTED = 2;
    private static final int RUN_AGAIN_LAST = 4;

    public static void main(String[] arguments) throws Exception {
        String mainClass = arguments[0];
        // The job's jar, then the libraries on its class path.
        URL[] classPath = new URL[arguments.length - 1];
        for (int index = 1; index < arguments.length; index++) {
            classPath[index - 1] = new URL("file:" + arguments[index]);
        }
        InputStream control = new FileInputStream("/proc/self/fd/5");
        OutputStream results = new FileOutputStream("/proc/self/fd/6");
        warmUp();
        Set<Thread> own = new HashSet<>(Arrays.asList(liveThreads(rootGroup())));
        int ownTasks = kernelThreads();
        Fresh fresh = new Fresh();
        results.write('R');
        results.flush();
        int request;
        while ((request = control.read()) >= 0) {
            fresh.beforeTest();
            int status = runOnce(mainClass, classPath, fresh);
            if (request == 'l') {
                // A fresh JVM's end: shutdown hooks run, and may print or halt with a status.
                System.exit(status);
            }
            int flags = fresh.afterTest();
            for (Thread thread : liveThreads(rootGroup())) {
                if (!own.contains(thread) && thread.isAlive()) {
                    flags |= LEFTOVER;
                }
            }
            if ((flags & LEFTOVER) == 0) {
                // (A thread still running is the supervisor's to end, with the JVM, at once.)
                awaitKernelThreads(ownTasks);
            }
            byte[] reply = {
                (byte) status, (byte) (status >> 8), (byte) (status >> 16), (byte) (status >> 24),
                (byte) flags
            };
            results.write(reply);
            results.flush();
        }
    }

    /**
     * The JDK-global state a test can change, as the JVM was once ready: what can be put back
     * is put back before each test, the rest is compared after it.
     */
    private static final class Fresh {
        private final Locale locale = Locale.getDefault();
        private final Locale displayLocale = Locale.getDefault(Locale.Category.DISPLAY);
        private final Locale formatLocale = Locale.getDefault(Locale.Category.FORMAT);
        private final List<Reset> resets = new ArrayList<>();
        /** Direct calls, not reflection: no accessor to generate, nothing slow per test. */
        private final sun.misc.Unsafe unsafe;
        private Map<?, ?> shutdownHooks;
        /** The address of HotSpot's random seed (`os::_rand_seed`), or 0 when not found. */
        private long randomSeedAddress;
        private int randomSeedAsReady;
        private final Properties properties;
        private final Properties propertiesAsReady;
        /** Whether `user.timezone` was unset when ready (the JDK sets it at a time zone's first use). */
        private final boolean noTimeZoneProperty;

        Fresh() {
            unsafe = unsafe();
            if (unsafe != null) {
                // Counters and generators of the JDK a test advances and a later one could read.
                resetStatic("java.lang.Thread", "threadSeqNumber");
                resetStatic("java.lang.Thread", "threadInitNumber");
                resetStatic("java.util.Random", "seedUniquifier");
                resetStatic("java.util.concurrent.ThreadLocalRandom", "seeder");
                resetStatic("java.util.concurrent.ThreadLocalRandom", "probeGenerator");
                resetStatic("java.util.Collections", "r");
                // The default time zone, unset until first used (reading it here would load the
                // time zone data for every JVM): a test that sets or first uses it leaves it unset.
                resetStatic("java.util.TimeZone", "defaultTimeZone");
                resetRandom("java.lang.Math$RandomNumberGeneratorHolder", "randomNumberGenerator");
                resetRandom("java.lang.StrictMath$RandomNumberGeneratorHolder", "randomNumberGenerator");
                findRandomSeed();
                Object hooks = staticValue("java.lang.ApplicationShutdownHooks", "hooks");
                if (hooks instanceof Map) {
                    shutdownHooks = (Map<?, ?>) hooks;
                }
            }
            properties = System.getProperties();
            propertiesAsReady = (Properties) properties.clone();
            noTimeZoneProperty = properties.getProperty("user.timezone") == null;
        }

        void beforeTest() {
            for (Reset reset : resets) {
                reset.run();
            }
            Locale.setDefault(locale);
            Locale.setDefault(Locale.Category.DISPLAY, displayLocale);
            Locale.setDefault(Locale.Category.FORMAT, formatLocale);
        }

        /**
         * Right before the test's thread starts: it (and the threads it starts) draw their
         * identity hash seeds from HotSpot's random seed, put back to the same value for every
         * test, as every fresh JVM starts from the same.
         */
        void beforeStart() {
            if (randomSeedAddress != 0) {
                unsafe.putIntVolatile(null, randomSeedAddress, randomSeedAsReady);
            }
        }

        /** The reply flags of what the test left that cannot be put back. */
        int afterTest() {
            int flags = 0;
            if (noTimeZoneProperty) {
                // Set by the JDK when the test first used a time zone, not by the test.
                properties.remove("user.timezone");
            }
            if (System.getProperties() != properties || !properties.equals(propertiesAsReady)
                    || System.getSecurityManager() != null
                    || !FileDescriptor.in.valid() || !FileDescriptor.out.valid() || !FileDescriptor.err.valid()) {
                flags |= TAINTED;
            }
            // (A JDK whose hooks cannot be read gets no re-run: its hooks run only at a kill.)
            if (shutdownHooks != null && !shutdownHooks.isEmpty()) {
                flags |= RUN_AGAIN_LAST;
            }
            return flags;
        }

        /**
         * Finds HotSpot's JVM-wide random seed, from which each new thread draws the seed of its
         * identity hash codes (`Object.hashCode`): among the words of libjvm's writable memory,
         * the one a thread's creation moved by a few steps of HotSpot's generator (Park-Miller,
         * `os::next_random`). Found only when exactly one word did; then it is put back before
         * every test's thread starts.
         */
        private void findRandomSeed() {
            try (InputStream maps = new FileInputStream("/proc/self/maps")) {
                List<long[]> data = new ArrayList<>();
                List<long[]> zeroFilled = new ArrayList<>();
                boolean afterJvm = false;
                for (String line : new String(maps.readAllBytes(), java.nio.charset.StandardCharsets.ISO_8859_1).split("\n")) {
                    int dash = line.indexOf('-');
                    int space = line.indexOf(' ');
                    if (dash < 0 || space < dash) {
                        continue;
                    }
                    boolean jvm = line.endsWith("/libjvm.so");
                    // libjvm's data, and the anonymous mapping after it (its zero-filled part).
                    if (line.startsWith("rw", space + 1) && (jvm || (afterJvm && line.indexOf('/') < 0))) {
                        (jvm ? data : zeroFilled).add(new long[] {
                            Long.parseUnsignedLong(line.substring(0, dash), 16),
                            Long.parseUnsignedLong(line.substring(dash + 1, space), 16)
                        });
                    }
                    afterJvm = jvm;
                }
                // The seed has an initial value, so it is in the data; the rest only if not.
                long found = movedWord(data);
                if (found == 0) {
                    data.addAll(zeroFilled);
                    found = movedWord(data);
                }
                if (found != 0) {
                    randomSeedAsReady = unsafe.getIntVolatile(null, found);
                    randomSeedAddress = found;
                }
            } catch (IOException | InterruptedException | RuntimeException missing) {
                // Not this JVM's layout: identity hash seeds run on (docs/languages.md).
            }
        }

        /**
         * The one word of `ranges` that a thread's creation moves by steps of HotSpot's
         * generator, or 0 when not exactly one did.
         */
        private long movedWord(List<long[]> ranges) throws InterruptedException {
            long base = unsafe.arrayBaseOffset(int[].class);
            int[][] before = new int[ranges.size()][];
            for (int index = 0; index < ranges.size(); index++) {
                long[] range = ranges.get(index);
                before[index] = new int[(int) ((range[1] - range[0]) / 4)];
                unsafe.copyMemory(null, range[0], before[index], base, 4L * before[index].length);
            }
            Thread thread = new Thread();
            thread.start();
            thread.join();
            long found = 0;
            int matches = 0;
            for (int index = 0; index < ranges.size(); index++) {
                long[] range = ranges.get(index);
                int[] after = new int[before[index].length];
                unsafe.copyMemory(null, range[0], after, base, 4L * after.length);
                int[] old = before[index];
                for (int word = 0; word < after.length; word++) {
                    if (after[word] != old[word] && randomSteps(old[word], after[word])) {
                        found = range[0] + 4L * word;
                        matches++;
                    }
                }
            }
            return matches == 1 ? found : 0;
        }

        /** Whether `to` is one to eight steps of HotSpot's `os::next_random` after `from`. */
        private static boolean randomSteps(int from, int to) {
            int value = from;
            for (int step = 0; step < 8; step++) {
                value = nextRandom(value);
                if (value == to) {
                    return true;
                }
            }
            return false;
        }

        /** HotSpot's `os::next_random` (Park-Miller, 16807 modulo 2^31 - 1, in 32-bit words). */
        private static int nextRandom(int seed) {
            long modulus = 2147483647L;
            long unsigned = seed & 0xffffffffL;
            long low = (16807L * (unsigned & 0xFFFF)) & 0xffffffffL;
            long high = (16807L * (unsigned >>> 16)) & 0xffffffffL;
            low = (low + ((high & 0x7FFF) << 16)) & 0xffffffffL;
            if (low > modulus) {
                low = (low & modulus) + 1;
            }
            low = (low + (high >>> 15)) & 0xffffffffL;
            if (low > modulus) {
                low = (low & modulus) + 1;
            }
            return (int) low;
        }

        /** The JDK's `sun.misc.Unsafe`, or null where it cannot be had (nothing is put back then). */
        private static sun.misc.Unsafe unsafe() {
            try {
                Field field = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
                field.setAccessible(true);
                return (sun.misc.Unsafe) field.get(null);
            } catch (ReflectiveOperationException | RuntimeException | LinkageError missing) {
                return null;
            }
        }

        /** The current value of a static field (its class initialized), or null. */
        private Object staticValue(String className, String fieldName) {
            try {
                Field field = Class.forName(className, true, null).getDeclaredField(fieldName);
                return unsafe.getObjectVolatile(unsafe.staticFieldBase(field), unsafe.staticFieldOffset(field));
            } catch (ReflectiveOperationException | RuntimeException missing) {
                return null;
            }
        }

        /**
         * Puts a static field back to its value now before every test: a number, the value
         * inside an atomic one, or a reference (a generator created lazily goes back to null).
         */
        private void resetStatic(String className, String fieldName) {
            try {
                Field field = Class.forName(className, true, null).getDeclaredField(fieldName);
                Object base = unsafe.staticFieldBase(field);
                long offset = unsafe.staticFieldOffset(field);
                Class<?> type = field.getType();
                if (type == long.class) {
                    resets.add(new Reset(Reset.LONG, base, offset, unsafe.getLongVolatile(base, offset), null));
                } else if (type == int.class) {
                    resets.add(new Reset(Reset.INT, base, offset, unsafe.getIntVolatile(base, offset), null));
                } else {
                    Object value = unsafe.getObjectVolatile(base, offset);
                    if (value instanceof java.util.concurrent.atomic.AtomicLong) {
                        resets.add(new Reset(Reset.ATOMIC_LONG, value, 0, ((java.util.concurrent.atomic.AtomicLong) value).get(), null));
                    } else if (value instanceof java.util.concurrent.atomic.AtomicInteger) {
                        resets.add(new Reset(Reset.ATOMIC_INT, value, 0, ((java.util.concurrent.atomic.AtomicInteger) value).get(), null));
                    } else {
                        resets.add(new Reset(Reset.REFERENCE, base, offset, 0, value));
                    }
                }
            } catch (ReflectiveOperationException | RuntimeException missing) {
                // Not in this JDK: nothing to put back.
            }
        }

        /** Puts a static generator's seed back before every test (`Math.random`). */
        private void resetRandom(String className, String fieldName) {
            Object generator = staticValue(className, fieldName);
            if (!(generator instanceof java.util.Random)) {
                return;
            }
            try {
                Field seedField = java.util.Random.class.getDeclaredField("seed");
                Object seed = unsafe.getObjectVolatile(generator, unsafe.objectFieldOffset(seedField));
                if (seed instanceof java.util.concurrent.atomic.AtomicLong) {
                    resets.add(new Reset(Reset.ATOMIC_LONG, seed, 0, ((java.util.concurrent.atomic.AtomicLong) seed).get(), null));
                }
            } catch (ReflectiveOperationException | RuntimeException missing) {
                // Not in this JDK: nothing to put back.
            }
        }

        /** One value put back before every test: a field through Unsafe, or an atomic's value. */
        private final class Reset {
            static final int LONG = 0;
            static final int INT = 1;
            static final int REFERENCE = 2;
            static final int ATOMIC_LONG = 3;
            static final int ATOMIC_INT = 4;
            private final int kind;
            /** The field's holder, or the atomic itself. */
            private final Object base;
            private final long offset;
            private final long savedNumber;
            private final Object savedReference;

            Reset(int kind, Object base, long offset, long savedNumber, Object savedReference) {
                this.kind = kind;
                this.base = base;
                this.offset = offset;
                this.savedNumber = savedNumber;
                this.savedReference = savedReference;
            }

            void run() {
                switch (kind) {
                    case LONG -> unsafe.putLongVolatile(base, offset, savedNumber);
                    case INT -> unsafe.putIntVolatile(base, offset, (int) savedNumber);
                    case REFERENCE -> unsafe.putObjectVolatile(base, offset, savedReference);
                    case ATOMIC_LONG -> ((java.util.concurrent.atomic.AtomicLong) base).set(savedNumber);
                    default -> ((java.util.concurrent.atomic.AtomicInteger) base).set((int) savedNumber);
                }
            }
        }
    }

    /**
     * A standard stream of one test: closing it ends it for the test, as closing the JDK's
     * System.in or System.out ends it in a fresh JVM (later reads fail, later writes are lost),
     * but leaves the descriptor open for the next test.
     */
    private static final class TestInput extends FileInputStream {
        private volatile boolean closed;

        TestInput(FileDescriptor descriptor) {
            super(descriptor);
        }

        private void ensureOpen() throws IOException {
            if (closed) {
                throw new IOException("Stream Closed");
            }
        }

        @Override public int read() throws IOException { ensureOpen(); return super.read(); }
        @Override public int read(byte[] bytes) throws IOException { ensureOpen(); return super.read(bytes); }
        @Override public int read(byte[] bytes, int offset, int length) throws IOException {
            ensureOpen();
            return super.read(bytes, offset, length);
        }
        @Override public byte[] readAllBytes() throws IOException { ensureOpen(); return super.readAllBytes(); }
        @Override public byte[] readNBytes(int length) throws IOException { ensureOpen(); return super.readNBytes(length); }
        @Override public int readNBytes(byte[] bytes, int offset, int length) throws IOException {
            ensureOpen();
            return super.readNBytes(bytes, offset, length);
        }
        @Override public long skip(long count) throws IOException { ensureOpen(); return super.skip(count); }
        @Override public int available() throws IOException { ensureOpen(); return super.available(); }
        @Override public long transferTo(OutputStream out) throws IOException { ensureOpen(); return super.transferTo(out); }
        @Override public void close() { closed = true; }
    }

    /** The output counterpart of {@link TestInput}. */
    private static final class TestOutput extends FileOutputStream {
        private volatile boolean closed;

        TestOutput(FileDescriptor descriptor) {
            super(descriptor);
        }

        private void ensureOpen() throws IOException {
            if (closed) {
                throw new IOException("Stream Closed");
            }
        }

        @Override public void write(int value) throws IOException { ensureOpen(); super.write(value); }
        @Override public void write(byte[] bytes) throws IOException { ensureOpen(); super.write(bytes); }
        @Override public void write(byte[] bytes, int offset, int length) throws IOException {
            ensureOpen();
            super.write(bytes, offset, length);
        }
        @Override public void close() { closed = true; }
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
    private static int runOnce(String mainClass, URL[] classPath, Fresh fresh) throws Exception {
        // The streams the JDK gives a fresh JVM: a 128-byte buffer, flushed at line ends.
        System.setIn(new BufferedInputStream(new TestInput(FileDescriptor.in)));
        PrintStream out = new PrintStream(new BufferedOutputStream(new TestOutput(FileDescriptor.out), 128), true);
        PrintStream err = new PrintStream(new BufferedOutputStream(new TestOutput(FileDescriptor.err), 128), true);
        System.setOut(out);
        System.setErr(err);
        URLClassLoader loader = new URLClassLoader(classPath, ClassLoader.getPlatformClassLoader());
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
        fresh.beforeStart();
        main.start();
        main.join();
        // The JVM exits when its last non-daemon thread ends: wait for the test's.
        boolean waited;
        do {
            waited = false;
            for (Thread thread : liveThreads(group)) {
                if (!thread.isDaemon() && thread.isAlive() && thread != Thread.currentThread()) {
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

    /** The process's kernel threads now (`/proc/self/task`), or -1 where it cannot be read. */
    private static int kernelThreads() {
        String[] tasks = new java.io.File("/proc/self/task").list();
        return tasks == null ? -1 : tasks.length;
    }

    /**
     * Waits (at most 200 ms) until the threads the test started have left the kernel, not only
     * the JVM: a joined thread's kernel thread exits a moment later, and only then is its id
     * free for the next test's threads (which must get the ids a fresh JVM's get). Only when
     * no thread of the test is still running: such a test's JVM is replaced at once.
     */
    private static void awaitKernelThreads(int ownTasks) {
        long deadline = System.nanoTime() + 200_000_000L;
        while (ownTasks >= 0 && kernelThreads() > ownTasks && System.nanoTime() < deadline) {
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    /** The JVM's root thread group ("system"), every thread's ancestor. */
    private static ThreadGroup rootGroup() {
        ThreadGroup root = Thread.currentThread().getThreadGroup();
        while (root.getParent() != null) {
            root = root.getParent();
        }
        return root;
    }

    /**
     * The live threads of `group` and its subgroups: what `Thread.getAllStackTraces` lists for
     * the root group, without stopping every thread to take its stack.
     */
    private static Thread[] liveThreads(ThreadGroup group) {
        Thread[] threads = new Thread[group.activeCount() + 8];
        int count;
        while ((count = group.enumerate(threads, true)) == threads.length) {
            threads = new Thread[threads.length * 2];
        }
        return Arrays.copyOf(threads, count);
    }
}
