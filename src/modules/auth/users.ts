import type { Database } from "../../db/index.js";
import { AppError } from "../../errors.js";
import { isUuid } from "../../resources/schemas.js";
import { hashPassword } from "./passwords.js";
import type { UserCreateInput } from "./schemas.js";

/** What may leave the database for a user: never the password hash. */
export const userSelect = { id: true, email: true, createdAt: true } as const;

export interface AuthUser {
  id: string;
  email: string;
  createdAt: Date;
}

/** E-mails are stored lower-cased, so comparing them ignores case. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

const isUniqueViolation = (error: unknown) =>
  typeof error === "object" && error !== null && "code" in error && error.code === "P2002";

export const usersService = {
  async create(db: Database, input: UserCreateInput): Promise<AuthUser> {
    const email = normalizeEmail(input.email);
    const passwordHash = await hashPassword(input.password);
    try {
      return await db.prisma.user.create({ data: { email, passwordHash }, select: userSelect });
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError("conflict", `A user with the e-mail ${email} already exists`);
      throw error;
    }
  },

  async findById(db: Database, id: string): Promise<AuthUser | null> {
    return isUuid(id) ? db.prisma.user.findUnique({ where: { id }, select: userSelect }) : null;
  },

  /** The one read of a password hash: for checking a login. */
  async findCredentials(db: Database, email: string): Promise<{ id: string; passwordHash: string } | null> {
    return db.prisma.user.findUnique({
      where: { email: normalizeEmail(email) },
      select: { id: true, passwordHash: true },
    });
  },
};
